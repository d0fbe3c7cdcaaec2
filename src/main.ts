#!/usr/bin/env node
/** The `govtrail` binary. */
import { runCli } from './cli.js';

process.exitCode = await runCli(process.argv);
