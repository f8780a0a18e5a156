import { z } from "zod";

export const SESSION_STATUSES = ["created", "idle", "running", "stopped", "timed_out", "error"] as const;
export const SessionStatus = z.enum(SESSION_STATUSES).meta({ id: "SessionStatus" });

export const THINKING_LEVELS = ["disabled", "low", "medium", "high"] as const;
export const ThinkingLevel = z.enum(THINKING_LEVELS).meta({ id: "ThinkingLevel" });

/** The spec's ProxyCountryCode list, verbatim (lowercase). */
export const PROXY_COUNTRY_CODES = (
  "ad ae af ag ai al am an ao aq ar as at au aw az ba bb bd be bf bg bh bi bj bl bm bn bo bq br bs bt bv bw by bz " +
  "ca cc cd cf cg ch ci ck cl cm co cr cs cu cv cw cx cy cz de dj dk dm do dz ec ee eg eh er es et fi fj fk fm fo fr " +
  "ga gd ge gf gg gh gi gl gm gn gp gq gr gs gt gu gw gy hk hm hn hr ht hu id ie il im in iq ir is it je jm jo jp ke " +
  "kg kh ki km kn kp kr kw ky kz la lb lc li lk lr ls lt lu lv ly ma mc md me mf mg mh mk ml mm mn mo mp mq mr ms mt " +
  "mu mv mw mx my mz na nc ne nf ng ni nl no np nr nu nz om pa pe pf pg ph pk pl pm pn pr ps pt pw py qa re ro rs ru " +
  "rw sa sb sc sd se sg sh si sj sk sl sm sn so sr ss st sv sx sy sz tc td tf tg th tj tk tl tm tn to tr tt tv tw tz " +
  "ua ug uk us uy uz va vc ve vg vi vn vu wf ws xk ye yt za zm zw"
).split(" ") as [string, ...string[]];

export const ProxyCountryCode = z.enum(PROXY_COUNTRY_CODES).meta({ id: "ProxyCountryCode" });

/** The `model` enum from the configured catalog (21 values by default). */
export function modelEnum(ids: readonly string[]) {
  return z.enum(ids as [string, ...string[]]).meta({ id: "Model" });
}
