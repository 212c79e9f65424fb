import { Link, PageHeader } from '../components/ui';
import { useTitle } from '../hooks';
import { paths } from '../router';

/** An address the app has no page for: a page heading like any other, so the focus and screen readers find it. */
export function NotFoundPage() {
  useTitle('Not found');
  return (
    <PageHeader
      title="This page does not exist"
      actions={
        <Link class="button" href={paths.topics()}>
          Go to the knowledge topics
        </Link>
      }
    >
      <p class="page-lead">The address may be mistyped, or the page was moved.</p>
    </PageHeader>
  );
}
