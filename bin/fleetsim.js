#!/usr/bin/env node
// The CLI runs from the compiled output (npm install builds it).
import { main } from '../dist/server/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
