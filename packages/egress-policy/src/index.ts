export { createEgressPolicy, type EgressPolicy, type EgressRule, parseEgressRules } from "./egress-policy";
export {
  DOMAIN_PATTERN,
  domainRefusal,
  hostAllowed,
  MAX_ALLOWED_DOMAINS,
  normaliseDomains,
} from "./allowed-domains";
