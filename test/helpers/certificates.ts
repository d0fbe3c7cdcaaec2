/**
 * A throwaway CA and a server certificate for localhost / 127.0.0.1 that it signs, made with the
 * openssl CLI (P-256 keys, valid two days), for TLS receivers in tests and scripts/receivers.ts.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface TestCertificates {
  /** Directory holding ca.pem, server.pem and server.key. */
  readonly dir: string;
  readonly caFile: string;
  readonly certFile: string;
  readonly keyFile: string;
  /** PEM texts of the same files. */
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

/** Whether the openssl CLI can be run here. */
export const hasOpenssl = (() => {
  try {
    return spawnSync('openssl', ['version'], { stdio: 'ignore' }).status === 0;
  } catch {
    return false;
  }
})();

/** Makes the CA and the server certificate in a fresh temporary directory. */
export function makeCertificates(cn = 'govtrail test CA'): TestCertificates {
  const dir = mkdtempSync(path.join(tmpdir(), 'govtrail-certs-'));
  const run = (args: string[]) => {
    const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${r.stderr}`);
  };
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  run(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', `/CN=${cn}`]);
  run(['req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost']);
  writeFileSync(
    path.join(dir, 'ext.cnf'),
    'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n',
  );
  run([
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.pem',
    '-days',
    '2',
    '-extfile',
    'ext.cnf',
  ]);
  const file = (f: string) => path.join(dir, f);
  return {
    dir,
    caFile: file('ca.pem'),
    certFile: file('server.pem'),
    keyFile: file('server.key'),
    ca: readFileSync(file('ca.pem'), 'utf8'),
    cert: readFileSync(file('server.pem'), 'utf8'),
    key: readFileSync(file('server.key'), 'utf8'),
  };
}
