import { resolve } from "node:path";
import { loadConfig } from "@bas/service-kit";
import { z } from "zod";

/** `NATS_URL= npm start` means "start your own", as if it were not set. */
const blankIsUnset = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === "" ? undefined : v), schema);

/** What `npm start` reads. Everything has a default, so the stack comes up with no configuration at all. */
export function loadStackConfig(env: NodeJS.ProcessEnv = process.env) {
  const config = loadConfig(
    {
      // 0 ("any free port") would leave the banner and the CLI without an address to give.
      PORT: z.coerce.number().int().min(1, "must be a port number from 1 to 65535").max(65535).default(8080),
      DATA_DIR: z.string().default(".data"),
      NATS_URL: blankIsUnset(z.string().url().optional()),
      DATABASE_URL: blankIsUnset(z.string().url().optional()),
      BOOTSTRAP_API_KEY: z
        .string()
        .regex(/^bas_[\x21-\x7e]{16,196}$/, "must start with bas_ and have at least 16 more characters")
        .optional(),
      LLM_BASE_URL: blankIsUnset(z.string().url().optional()),
      LLM_API_KEY: z.string().optional(),
      CHROMIUM_PATH: z.string().optional(),
      NAMESPACE: z.string().default("bas"),
      LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
      MODEL_ROUTES: z.string().optional(),
      HOST: z.string().default("127.0.0.1"),
      // Given, these replace the ones the stack keeps in DATA_DIR/secrets.json.
      SECRETS_KEY: blankIsUnset(z.string().optional()),
      BLOB_SIGNING_KEY: blankIsUnset(z.string().optional()),
      PROVIDER_KEY_SECRET: blankIsUnset(z.string().optional()),
      XDG_CONFIG_HOME: blankIsUnset(z.string().optional()),
      XDG_CACHE_HOME: blankIsUnset(z.string().optional()),
    },
    env,
  );
  return { ...config, DATA_DIR: resolve(config.DATA_DIR) };
}

export type StackConfig = ReturnType<typeof loadStackConfig>;
