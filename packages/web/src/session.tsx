import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { ApiMeta, Permission, SessionInfo } from '@rxs/web-api';

export interface SessionState {
  info: SessionInfo;
  meta: ApiMeta;
  signOut(): Promise<void>;
}

export const SessionContext = createContext<SessionState | null>(null);

export function useSession(): SessionState {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in page');
  return session;
}

/** Whether the signed-in user's role has a permission: what the page offers follows from it. */
export function useCan(): (permission: Permission) => boolean {
  const { info } = useSession();
  return (permission) => info.permissions.includes(permission);
}
