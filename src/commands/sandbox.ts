/**
 * `govtrail sandbox`: runs the sandbox tenant as a server, for trials, tests and benchmarks. It
 * prints the base URL and, for each of the three clients, a ready-to-paste environment block and
 * a curl command that fetches a token; `--json` prints one machine-readable line instead. It runs
 * until SIGINT or SIGTERM and then closes cleanly.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { importJWK, SignJWT } from 'jose';
import { GovtrailError } from '../core/errors.js';
import { parseFaultSpec, type Sandbox, type SandboxCredentials, startSandbox } from '../sandbox/index.js';
import { integerArg } from './options.js';

const KEY_PREFIX = 'secret-token:conductorone.com:v1:';

function faultSpec(value: string): string {
  try {
    parseFaultSpec(value);
  } catch (error) {
    throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
  }
  return value;
}

function rfc3339(value: string): string {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i.test(value)) {
    throw new InvalidArgumentError(
      `expected an RFC 3339 time such as 2025-01-06T09:00:00Z, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/** Quotes a value for a POSIX shell. */
function sh(value: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

interface SandboxCommandOptions {
  port: number;
  host: string;
  entries: number;
  seed: number;
  start: string;
  clientId?: string;
  clientSecret?: string;
  tokenTtl: number;
  faults?: string;
  faultSeed?: number;
  paging: 'keyset' | 'offset';
  appendEvery?: number;
  scenarios?: boolean;
  emitUnpopulated?: boolean;
  json?: boolean;
}

function envBlock(baseUrl: string, c: SandboxCredentials): string {
  return `GOVTRAIL_BASE_URL=${sh(baseUrl)} GOVTRAIL_CLIENT_ID=${sh(c.clientId)} GOVTRAIL_CLIENT_SECRET=${sh(c.clientSecret)}`;
}

function curlSecret(baseUrl: string, c: SandboxCredentials): string {
  return (
    `curl -s -X POST ${sh(`${baseUrl}/auth/v1/token`)} -d grant_type=client_credentials ` +
    `--data-urlencode ${sh(`client_id=${c.clientId}`)} --data-urlencode ${sh(`client_secret=${c.clientSecret}`)}`
  );
}

/** A curl command with a freshly signed client assertion (valid for five minutes). */
async function curlAssertion(baseUrl: string, c: SandboxCredentials): Promise<string> {
  const jwk = JSON.parse(
    Buffer.from(c.clientSecret.slice(KEY_PREFIX.length), 'base64url').toString('utf8'),
  ) as {
    kty: string;
    crv: string;
    d: string;
    x: string;
  };
  const key = await importJWK(jwk, 'EdDSA');
  const now = Math.floor(Date.now() / 1000);
  const assertion = await new SignJWT({})
    .setProtectedHeader({ alg: 'EdDSA' })
    .setIssuer(c.clientId)
    .setSubject(c.clientId)
    .setAudience(new URL(baseUrl).hostname.replace(/^\[(.*)\]$/, '$1'))
    .setIssuedAt(now)
    .setExpirationTime(now + 300)
    .sign(key);
  return (
    `curl -s -X POST ${sh(`${baseUrl}/auth/v1/token`)} -d grant_type=client_credentials ` +
    `--data-urlencode ${sh(`client_id=${c.clientId}`)} ` +
    `-d client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer ` +
    `-d client_assertion=${assertion}`
  );
}

async function describe(sandbox: Sandbox, opts: SandboxCommandOptions): Promise<string> {
  const { baseUrl, credentials } = sandbox;
  const lines = [
    `Sandbox tenant listening on ${baseUrl}`,
    `  ${sandbox.history.size.toLocaleString('en')} history entries (seed ${opts.seed}, ${opts.paging} paging)` +
      (opts.faults === undefined ? '' : `, random faults ${opts.faults}`) +
      (opts.appendEvery === undefined ? '' : `, one new entry every ${opts.appendEvery} ms`),
    '',
    '# Admin client, plain client secret',
    envBlock(baseUrl, credentials.secret),
    curlSecret(baseUrl, credentials.secret),
    '',
    '# Admin client, key secret: the client signs an EdDSA client assertion with it',
    '# (the curl below carries one signed now, valid for five minutes)',
    envBlock(baseUrl, credentials.key),
    await curlAssertion(baseUrl, credentials.key),
    '',
    '# Non-admin client: its tokens work, but the history listing and the delete answer 403',
    envBlock(baseUrl, credentials.nonAdmin),
    curlSecret(baseUrl, credentials.nonAdmin),
    '',
    '# Then, with the access_token of an admin client:',
    `curl -s -H "Authorization: Bearer $TOKEN" ${sh(`${baseUrl}/api/v1/settings/ai-governance/history?page_size=10`)}`,
    '',
    `# Control endpoints (no token): POST ${baseUrl}/_sandbox/append?count=N, POST /_sandbox/expire-tokens,`,
    '# POST /_sandbox/faults, GET /_sandbox/stats, GET /_sandbox/entries (NDJSON), GET /_sandbox/owners',
    '',
    'Press Ctrl+C to stop.',
  ];
  return `${lines.join('\n')}\n`;
}

/** Resolves on the first SIGINT or SIGTERM. */
function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolve(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}

/** The `sandbox` command. */
export function sandboxCommand(): Command {
  const command = new Command('sandbox')
    .description(
      'Run the sandbox tenant: an HTTP server that implements the tenant API (token endpoint, ' +
        'AI governance settings history with paging, DeleteEntitlementOwner) over a seeded, realistic ' +
        'history, with optional fault injection. Prints the base URL and credentials, then serves until ' +
        'interrupted (Ctrl+C or SIGTERM).',
    )
    .addOption(
      new Option('--port <n>', 'TCP port to listen on; 0 picks a free port')
        .default(0)
        .argParser(integerArg(0, 65_535)),
    )
    .addOption(new Option('--host <address>', 'address to listen on').default('127.0.0.1'))
    .addOption(
      new Option('--entries <n>', 'length of the seeded history (0: empty)')
        .default(200)
        .argParser(integerArg(0, 50_000_000)),
    )
    .addOption(
      new Option('--seed <n>', 'seed of the history: the same seed and length give the same history')
        .default(1)
        .argParser(integerArg(0, 2 ** 32 - 1)),
    )
    .addOption(
      new Option('--start <time>', 'createdAt of the oldest seeded entry (RFC 3339)')
        .default('2025-01-06T09:00:00Z')
        .argParser(rfc3339),
    )
    .addOption(
      new Option('--client-id <id>', 'client id of the admin plain-secret client (default: generated)'),
    )
    .addOption(new Option('--client-secret <secret>', 'its client secret (default: random)'))
    .addOption(
      new Option('--token-ttl <seconds>', 'expires_in of issued access tokens')
        .default(3600)
        .argParser(integerArg(1, 31_536_000)),
    )
    .action(serveSandbox);
  return addBehaviourOptions(command);
}

/** The options of how the sandbox behaves while it serves: faults, paging, growth, output. */
function addBehaviourOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        '--faults <spec>',
        'random faults: comma-separated kind:probability with kinds 408, 429, 500, 502, 503, 504, ' +
          'reset, slow, expire, and optionally retry-after:SECONDS for 429s ' +
          '(e.g. 429:0.1,500:0.05,reset:0.02,slow:0.02)',
      ).argParser(faultSpec),
    )
    .addOption(
      new Option('--fault-seed <n>', 'seed of the random fault draws (default: --seed)').argParser(
        integerArg(0, 2 ** 32 - 1),
      ),
    )
    .addOption(
      new Option(
        '--paging <mode>',
        'page tokens: keyset (stable while entries are appended) or offset (re-serves entries when ' +
          'entries are appended during a listing)',
      )
        .choices(['keyset', 'offset'])
        .default('keyset'),
    )
    .addOption(
      new Option(
        '--append-every <ms>',
        'append one new entry, stamped with the current time, every MS milliseconds',
      ).argParser(integerArg(1, 86_400_000)),
    )
    .addOption(
      new Option(
        '--scenarios',
        'append a curated tail of notable changes that fires every default alert rule',
      ),
    )
    .addOption(
      new Option(
        '--emit-unpopulated',
        'write every field of every entry, defaults included ("", false, 0, [], null), as ' +
          'grpc-gateway v2 does by default, instead of leaving default values out',
      ),
    )
    .addOption(
      new Option(
        '--json',
        'print one JSON line {"baseUrl", "credentials", "entries"} on stdout instead of the text',
      ),
    );
}

/** The action: the sandbox started, described, fed (--append-every) until a signal, then closed. */
async function serveSandbox(opts: SandboxCommandOptions): Promise<void> {
  const sandbox = await listen(opts);
  const stopped = untilSignal();
  let timer: NodeJS.Timeout | undefined;
  try {
    if (opts.json === true) {
      process.stdout.write(
        `${JSON.stringify({ baseUrl: sandbox.baseUrl, credentials: sandbox.credentials, entries: sandbox.history.size })}\n`,
      );
    } else {
      process.stdout.write(await describe(sandbox, opts));
    }
    if (opts.appendEvery !== undefined) {
      const history = sandbox.history;
      timer = setInterval(() => {
        try {
          history.append(1, { at: new Date().toISOString() });
        } catch (error) {
          // The seeded history can end after the wall clock (a --start in the future): continue it instead.
          if (!(error instanceof RangeError)) throw error;
          history.append(1);
        }
      }, opts.appendEvery);
    }
    const signal = await stopped;
    if (opts.json !== true) process.stderr.write(`\n${signal}: closing the sandbox tenant\n`);
  } finally {
    if (timer !== undefined) clearInterval(timer);
    await sandbox.close();
  }
}

/** Starts the sandbox; an address that cannot be listened on is a USAGE error. */
async function listen(opts: SandboxCommandOptions): Promise<Sandbox> {
  try {
    return await startSandbox({
      host: opts.host,
      port: opts.port,
      entries: opts.entries,
      seed: opts.seed,
      start: opts.start,
      tokenTtlSeconds: opts.tokenTtl,
      paging: opts.paging,
      ...(opts.clientId === undefined ? {} : { clientId: opts.clientId }),
      ...(opts.clientSecret === undefined ? {} : { clientSecret: opts.clientSecret }),
      ...(opts.faults === undefined ? {} : { faults: opts.faults }),
      ...(opts.faultSeed === undefined ? {} : { faultSeed: opts.faultSeed }),
      ...(opts.scenarios === true ? { scenarios: true } : {}),
      ...(opts.emitUnpopulated === true ? { emitUnpopulated: true } : {}),
    });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'EADDRINUSE' || code === 'EADDRNOTAVAIL' || code === 'EACCES') {
      throw new GovtrailError('USAGE', `cannot listen on ${opts.host}:${opts.port} (${String(code)})`, {
        cause: error,
      });
    }
    throw error;
  }
}
