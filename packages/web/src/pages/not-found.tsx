import { EmptyState, Link } from '../components/ui';
import { useTitle } from '../hooks';
import { paths } from '../router';

export function NotFoundPage() {
  useTitle('Not found');
  return (
    <EmptyState
      title="This page does not exist"
      action={
        <Link class="button" href={paths.topics()}>
          Go to the knowledge topics
        </Link>
      }
    >
      The address may be mistyped, or the page was moved.
    </EmptyState>
  );
}
