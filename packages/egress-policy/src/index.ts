export { createEgressPolicy, type EgressPolicy, type EgressRule, parseEgressRules } from "./egress-policy";
