import type { TopicSummary } from '@rxs/web-api';
import { plural } from './ui';

/** Approved topics to tick, each by its current revision id, with its version and record count. */
export function TopicChoices({
  topics,
  selected,
  onToggle,
}: {
  topics: TopicSummary[];
  selected: ReadonlySet<string>;
  onToggle: (revisionId: string) => void;
}) {
  return (
    <ul class="choice-list">
      {topics.map((topic) => (
        <li key={topic.historyId}>
          <label class="checkbox">
            <input
              type="checkbox"
              checked={selected.has(topic.currentRevisionId!)}
              onChange={() => onToggle(topic.currentRevisionId!)}
            />
            <span>
              <strong>{topic.name}</strong>{' '}
              <span class="muted">
                v{topic.currentVersion} · {plural(topic.recordCount, 'record')} ·{' '}
                <code>{topic.currentRevisionId}</code>
              </span>
            </span>
          </label>
        </li>
      ))}
    </ul>
  );
}

/** The set with the revision id added, or removed when it was in. */
export function toggled(selected: ReadonlySet<string>, revisionId: string): Set<string> {
  const next = new Set(selected);
  if (next.has(revisionId)) next.delete(revisionId);
  else next.add(revisionId);
  return next;
}
