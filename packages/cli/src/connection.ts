import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { UserError } from './errors.js';

/** Where the three services are and the key to reach them with. Never printed. */
export interface Connection {
  techdocUrl: string;
  recordsUrl: string;
  tracerUrl: string;
  apiKey: string;
  /** Where each value came from, for messages ("flag --url", "env RXS_RECORDS_URL", "profile prod"). */
  sources: Record<'techdocUrl' | 'recordsUrl' | 'tracerUrl' | 'apiKey', string>;
  /** The profile's mapping file (docs/mapping.md), `~` expanded; `--mapping` overrides it. */
  mapping?: string;
}

export interface ConnectionOptions {
  url?: string;
  techdocUrl?: string;
  recordsUrl?: string;
  tracerUrl?: string;
  apiKeyFile?: string;
  profile?: string;
  config?: string;
}

/** One profile of the config file. `url` sets all three services at once. */
export interface Profile {
  url?: string;
  techdocUrl?: string;
  recordsUrl?: string;
  tracerUrl?: string;
  /** A file holding the key (preferred); `~` is the home folder. */
  apiKeyFile?: string;
  /** The name of an environment variable holding the key. */
  apiKeyEnv?: string;
  apiKey?: string;
  /** A mapping file for exports and syncs with this profile (docs/mapping.md); `~` is the home folder. */
  mapping?: string;
}

export interface ConfigFile {
  defaultProfile?: string;
  profiles: Record<string, Profile>;
}

export const DEFAULT_CONFIG_PATH = join(homedir(), '.config', 'rxs', 'config.json');

export function addConnectionOptions(command: Command): Command {
  return command
    .option('--url <url>', 'base URL of all three services when they share one origin')
    .option('--techdoc-url <url>', 'techdoc base URL (env RXS_TECHDOC_URL)')
    .option('--records-url <url>', 'records base URL (env RXS_RECORDS_URL)')
    .option('--tracer-url <url>', 'tracer base URL (env RXS_TRACER_URL)')
    .option('--api-key-file <file>', 'read the API key from this file (else env RXS_API_KEY or the profile)')
    .option('--profile <name>', 'named profile of the config file (env RXS_PROFILE)')
    .option('--config <file>', `config file (env RXS_CONFIG; default ${DEFAULT_CONFIG_PATH})`);
}

export const expandHome = (path: string) => (path.startsWith('~/') ? join(homedir(), path.slice(2)) : path);

function readKeyFile(path: string, origin: string): string {
  try {
    const key = readFileSync(resolve(expandHome(path)), 'utf8').trim();
    if (!key) throw new UserError(`The API key file ${path} (${origin}) is empty.`);
    return key;
  } catch (error) {
    if (error instanceof UserError) throw error;
    throw new UserError(
      `Cannot read the API key file ${path} (${origin}): ${(error as NodeJS.ErrnoException).code ?? String(error)}.`,
    );
  }
}

function loadConfig(path: string, explicit: boolean): ConfigFile | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (!explicit && (error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new UserError(
      `Cannot read the config file ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}.`,
    );
  }
  try {
    const parsed = JSON.parse(text) as ConfigFile;
    if (!parsed || typeof parsed !== 'object' || typeof parsed.profiles !== 'object')
      throw new Error('it needs a "profiles" object');
    return parsed;
  } catch (error) {
    throw new UserError(`The config file ${path} is not valid: ${(error as Error).message}.`);
  }
}

function checkUrl(value: string, name: string, origin: string): string {
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http(s)');
    return value.replace(/\/+$/, '');
  } catch {
    throw new UserError(`The ${name} "${value}" (${origin}) is not an http(s) URL.`);
  }
}

/** Flags win over environment variables, which win over the profile. */
export function resolveConnection(
  options: ConnectionOptions,
  env: NodeJS.ProcessEnv = process.env,
): Connection {
  const configPath = options.config ?? env.RXS_CONFIG;
  const config = loadConfig(configPath ?? DEFAULT_CONFIG_PATH, configPath !== undefined);
  const profileName = options.profile ?? env.RXS_PROFILE ?? config?.defaultProfile;
  let profile: Profile = {};
  if (profileName) {
    if (!config)
      throw new UserError(
        `Profile "${profileName}" was asked for, but there is no config file at ${configPath ?? DEFAULT_CONFIG_PATH}.`,
      );
    const found = config.profiles[profileName];
    if (!found) {
      throw new UserError(
        `No profile "${profileName}" in ${configPath ?? DEFAULT_CONFIG_PATH}; it has: ${Object.keys(config.profiles).join(', ') || 'none'}.`,
      );
    }
    profile = found;
  }
  const fromProfile = `profile ${profileName}`;
  const sources = {} as Connection['sources'];
  const pick = (name: 'techdocUrl' | 'recordsUrl' | 'tracerUrl', flag: string, envName: string): string => {
    const candidates: [string | undefined, string][] = [
      [options[name], `flag --${flag}`],
      [options.url, 'flag --url'],
      [env[envName], `env ${envName}`],
      [profile[name], fromProfile],
      [profile.url, fromProfile],
    ];
    const found = candidates.find(([value]) => value);
    if (!found) {
      throw new UserError(
        `No ${flag.replace('-url', '')} service URL: pass --url or --${flag}, set ${envName}, or use a profile (--profile).`,
      );
    }
    sources[name] = found[1];
    return checkUrl(found[0]!, flag.replace('-', ' '), found[1]);
  };
  const techdocUrl = pick('techdocUrl', 'techdoc-url', 'RXS_TECHDOC_URL');
  const recordsUrl = pick('recordsUrl', 'records-url', 'RXS_RECORDS_URL');
  const tracerUrl = pick('tracerUrl', 'tracer-url', 'RXS_TRACER_URL');

  let apiKey: string | undefined;
  if (options.apiKeyFile) {
    apiKey = readKeyFile(options.apiKeyFile, 'flag --api-key-file');
    sources.apiKey = 'flag --api-key-file';
  } else if (env.RXS_API_KEY) {
    apiKey = env.RXS_API_KEY.trim();
    sources.apiKey = 'env RXS_API_KEY';
  } else if (profile.apiKeyFile) {
    apiKey = readKeyFile(profile.apiKeyFile, fromProfile);
    sources.apiKey = fromProfile;
  } else if (profile.apiKeyEnv) {
    apiKey = env[profile.apiKeyEnv]?.trim();
    if (!apiKey)
      throw new UserError(`${fromProfile} takes the API key from $${profile.apiKeyEnv}, which is not set.`);
    sources.apiKey = fromProfile;
  } else if (profile.apiKey) {
    apiKey = profile.apiKey.trim();
    sources.apiKey = fromProfile;
  }
  if (!apiKey) {
    throw new UserError(
      'No API key: pass --api-key-file FILE, set RXS_API_KEY, or use a profile. Keys are created in Settings → API keys or with "rxs admin key create".',
    );
  }
  if (profile.mapping !== undefined && (typeof profile.mapping !== 'string' || !profile.mapping.trim()))
    throw new UserError(`${fromProfile}: "mapping" must be the path of a mapping file (docs/mapping.md).`);
  const mapping = profile.mapping ? resolve(expandHome(profile.mapping)) : undefined;
  return { techdocUrl, recordsUrl, tracerUrl, apiKey, sources, ...(mapping && { mapping }) };
}
