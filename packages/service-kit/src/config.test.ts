import { z } from "zod";
import { ConfigError, grpcTarget, jsonEnv, loadConfig } from "./config";

const load = (ADDR: string) => loadConfig({ ADDR: grpcTarget }, { ADDR });

test.each(["sessions:50051", "127.0.0.1:50051", "dns:///bas-sessions-grpc:50051", "ipv4:10.0.0.1:1,10.0.0.2:1"])(
  "a gRPC target %s is taken as it is",
  (target) => expect(load(target)).toEqual({ ADDR: target }),
);

test.each(["sessions", "http://sessions:50051", "dns:///sessions", "ipv4:10.0.0.1:1,", "sessions:50051 "])(
  "%j is refused, saying which variable and what it takes",
  (target) => {
    expect(() => load(target)).toThrow(ConfigError);
    expect(() => load(target)).toThrow("ADDR: expected host:port, dns:///host:port or ipv4:ip:port,ip:port");
  },
);

test("a JSON variable is parsed and checked; absent or blank, it is the empty value; bad JSON is named", () => {
  const shape = { LIST: jsonEnv(z.array(z.number()), []) };
  expect(loadConfig(shape, { LIST: "[1,2]" })).toEqual({ LIST: [1, 2] });
  expect(loadConfig(shape, {})).toEqual({ LIST: [] });
  expect(loadConfig(shape, { LIST: " " })).toEqual({ LIST: [] });
  expect(() => loadConfig(shape, { LIST: "[1," })).toThrow("LIST: expected JSON");
  expect(() => loadConfig(shape, { LIST: '["a"]' })).toThrow(ConfigError);
});
