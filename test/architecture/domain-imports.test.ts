import { join, resolve } from "node:path";
import { findDomainIo } from "../../scripts/domain-imports";

test("no domain/ folder loads I/O, directly or through a package's index", () => {
  expect(findDomainIo(resolve(__dirname, "../.."))).toEqual([]);
});

test("the check names the chain by which a domain file reaches I/O, and an outside module's types named there", () => {
  // pure.ts names only the types of the project's own package: not followed, not reported.
  expect(findDomainIo(join(__dirname, "fixture"))).toEqual([
    "services/demo/src/domain/impure.ts → @fixture/io-kit → packages/io-kit/src/connect.ts → @nats-io/transport-node",
    "services/demo/src/domain/transport-type.ts → node:net (types)",
  ]);
});
