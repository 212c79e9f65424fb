export interface DemoTopic {
  name: string;
  historyId: string;
  /** The revision the records live under now. */
  currentRevisionId: string;
  /** Earlier revisions (a re-approved topic has one): GET /kt/{old} works, records by it are []. */
  oldRevisionIds: string[];
  recordIds: string[];
}

export interface DemoUser {
  email: string;
  role: string;
  password: string;
  apiKey: string;
}

/** Everything a script needs to drive the demo; written to `<dataDir>/demo.json`. */
export interface DemoInfo {
  techdocUrl: string;
  recordsUrl: string;
  tracerUrl: string;
  tenant: {
    id: string;
    name: string;
    topics: Record<string, DemoTopic>;
    users: Record<'owner' | 'editor' | 'viewer', DemoUser>;
  };
  otherTenant: {
    id: string;
    name: string;
    topics: Record<string, DemoTopic>;
    users: Record<'owner', DemoUser>;
  };
  traceIds: string[];
}
