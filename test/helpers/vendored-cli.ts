/**
 * `node --import tsx test/helpers/vendored-cli.ts VENDOR_DIR ARGS…`: the CLI from source, started
 * as the built binary starts it (src/main.ts) but with the vendored bundles of VENDOR_DIR (made by
 * scripts/bundle-vendor.mjs) in place of the installed packages they bundle.
 */
import { pathToFileURL } from 'node:url';
import { useVendorBundles } from '../../src/runtime/vendor.js';

const [dir, ...args] = process.argv.slice(2);
const redirected = useVendorBundles(pathToFileURL(`${dir}/`));
if (redirected.length === 0) throw new Error(`no vendored bundles in ${dir}`);
const { runCli } = await import('../../src/cli.js');
process.exitCode = await runCli([process.argv[0] as string, 'govtrail', ...args]);
