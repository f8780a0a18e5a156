#!/usr/bin/env node
// The repository runs TypeScript without a build step: tsx compiles the CLI as it loads.
require("tsx/cjs");
require("../src/main.ts");
