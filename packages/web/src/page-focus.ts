import { useEffect, type Ref } from 'preact/hooks';

/**
 * Focus on a page change. A single-page app replaces the page without the browser noticing, so the
 * focus would stay on <body> (or on a link that is gone) and a screen reader would say nothing: the
 * new page's main heading takes the focus instead, once the page has rendered it. Tab then goes on
 * from the top of the page, after the header.
 */

/** A page change waiting for its focus, and what had the focus when it was asked for. */
let pending: { from: Element | null } | undefined;
/** How long a page may take to show its heading (it may be loading its data) before we give up. */
const WAIT_MS = 10_000;

/** The next page shown takes the focus: after a navigation, Back and Forward, or signing in. */
export function requestPageFocus(): void {
  pending = { from: document.activeElement };
}

/**
 * Moves the focus into `main` after each requested page change (see `requestPageFocus`): to its
 * first <h1>, or to `main` itself when the page has shown itself without one (an error, not found).
 * The focus waits while `main` is empty (a redirect) or a page still loads (`.loading`). Whoever focused something inside
 * the page since (a click, a field of the page's own) keeps it. `page` changes with each page shown (its address).
 */
export function usePageFocus(main: Ref<HTMLElement | null>, page: string): void {
  useEffect(() => {
    window.addEventListener('popstate', requestPageFocus);
    return () => window.removeEventListener('popstate', requestPageFocus);
  }, []);
  useEffect(() => {
    const region = main.current;
    const request = pending;
    if (!request || !region) return;
    const settle = (): boolean => {
      const active = document.activeElement;
      if (active && active !== request.from && active !== region && region.contains(active)) return true;
      const heading = region.querySelector<HTMLElement>('h1');
      const shown = region.childElementCount > 0 && !region.querySelector('.loading');
      const target = heading ?? (shown ? region : null);
      if (!target) return false;
      if (!target.hasAttribute('tabindex')) target.tabIndex = -1;
      target.focus({ preventScroll: true });
      return true;
    };
    const stop = () => {
      observer.disconnect();
      clearTimeout(timer);
    };
    const done = () => {
      pending = undefined;
      stop();
    };
    const observer = new MutationObserver(() => settle() && done());
    const timer = setTimeout(done, WAIT_MS);
    if (settle()) done();
    else observer.observe(region, { childList: true, subtree: true });
    // A next page change while this one waits: its own run takes over the request.
    return stop;
  }, [page]);
}
