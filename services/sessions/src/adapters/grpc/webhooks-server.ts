import type { webhooks } from "@bas/proto";
import { type HandlerLog, unaryService } from "@bas/service-kit";
import type { WebhookEndpointRecord } from "../../app/ports";
import type { Webhooks } from "../../app/webhooks";
import { limitOf, projectIdOf } from "./requests";

const toProtoEndpoint = (e: WebhookEndpointRecord): webhooks.Endpoint => ({ ...e });

/** The gateway-facing `Webhooks` service. */
export function webhooksServer(w: Webhooks, log?: HandlerLog): webhooks.WebhooksServer {
  return unaryService(
    {
      createEndpoint: async (req: webhooks.CreateEndpointRequest): Promise<webhooks.CreatedEndpoint> => {
        const { endpoint, secret } = await w.create(projectIdOf(req.projectId), req.url);
        return { endpoint: toProtoEndpoint(endpoint), secret };
      },
      listEndpoints: async (req: webhooks.ListEndpointsRequest) => ({
        endpoints: (await w.list(projectIdOf(req.projectId))).map(toProtoEndpoint),
      }),
      deleteEndpoint: async (req: webhooks.EndpointRef) => {
        await w.remove(projectIdOf(req.projectId), req.endpointId);
        return {};
      },
      listDeliveries: async (req: webhooks.ListDeliveriesRequest): Promise<webhooks.ListDeliveriesResponse> => {
        const found = await w.deliveries(projectIdOf(req.projectId), req.endpointId, limitOf(req.limit, 50, 200));
        return {
          deliveries: found.map((d) => ({
            ...d,
            lastStatus: d.lastStatus ?? undefined,
            lastError: d.lastError ?? undefined,
            nextAttemptAt: d.nextAttemptAt ?? undefined,
            deliveredAt: d.deliveredAt ?? undefined,
          })),
        };
      },
    },
    log,
  );
}
