export { buildApp, type AppOptions } from './app.js';
export { createServices, type Services } from './services/index.js';
export { startServer, closeOnSignals, type RunningServer } from './server.js';
export {
  configFromEnv,
  databaseUrlOf,
  parseServices,
  SERVICES,
  DEFAULT_BODY_LIMIT,
  type ServerConfig,
  type ServiceName,
} from './config.js';
export { openStorage, isPostgresUrl } from './storage/open.js';
export type { Storage } from './storage/database.js';
export { Accounts, type Tenant, type User, type ApiKeyInfo, type NewApiKey } from './auth/accounts.js';
export type { Principal } from './auth/principal.js';
export { HttpError } from './http/errors.js';
export { seedDemo, DEMO_KEY_FILE } from './demo/seed.js';
export type { DemoInfo } from './demo/demo-info.js';
export { copyDatabase, type TableReport } from './storage/copy.js';
export { insertRecords } from './storage/records-write.js';
export { insertTrace } from './storage/traces-write.js';
export { changeActor, type ChangeActor } from './storage/change-actor.js';
