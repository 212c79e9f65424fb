import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { TopicDetail } from '@rxs/web-api';
import { api } from './api';

export interface Async<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  /** Loads again, keeping the current data on screen meanwhile. */
  reload(): void;
}

/** Runs `load` whenever `deps` change; answers that arrive after a newer request are dropped. */
export function useAsync<T>(load: () => Promise<T>, deps: unknown[]): Async<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [generation, setGeneration] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const ticket = ++latest.current;
    setState((previous) => ({ data: previous.data, loading: true }));
    load().then(
      (data) => ticket === latest.current && setState({ data, loading: false }),
      (error: unknown) => ticket === latest.current && setState({ error, loading: false }),
    );
  }, [...deps, generation]);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/** A value that follows `value` after it stopped changing for `ms`. */
export function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

/** Sets the document title while the page is shown. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = title ? `${title} · RXS` : 'RXS';
  }, [title]);
}

/** A knowledge topic by history id, with its current revision, fields and revisions. */
export function useTopic(historyId: string): Async<TopicDetail> {
  return useAsync(() => api.get<TopicDetail>(`/topics/${historyId}`), [historyId]);
}
