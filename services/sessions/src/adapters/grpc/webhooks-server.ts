import type { webhooks } from "@bas/proto";
import { type HandlerLog, unaryService } from "@bas/service-kit";
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from "../../app/ports";
import type { Webhooks } from "../../app/webhooks";
import { limitOf, projectIdOf } from "./requests";

const toProtoEndpoint = (e: WebhookEndpointRecord): webhooks.Endpoint => ({ ...e });
const toProtoDelivery = (d: WebhookDeliveryRecord): webhooks.Delivery => ({
  ...d,
  lastStatus: d.lastStatus ?? undefined,
  lastError: d.lastError ?? undefined,
  nextAttemptAt: d.nextAttemptAt ?? undefined,
  deliveredAt: d.deliveredAt ?? undefined,
});

/** The gateway-facing `Webhooks` service. */
export function webhooksServer(w: Webhooks, log?: HandlerLog): webhooks.WebhooksServer {
  return unaryService(
    {
      createEndpoint: async (req: webhooks.CreateEndpointRequest): Promise<webhooks.CreatedEndpoint> => {
        const { endpoint, secret } = await w.create(projectIdOf(req.projectId), req.url, req.events);
        return { endpoint: toProtoEndpoint(endpoint), secret };
      },
      updateEndpoint: async (req: webhooks.UpdateEndpointRequest): Promise<webhooks.Endpoint> =>
        toProtoEndpoint(
          await w.update(projectIdOf(req.projectId), req.endpointId, { url: req.url, events: req.events?.types }),
        ),
      rotateSecret: async (req: webhooks.EndpointRef): Promise<webhooks.CreatedEndpoint> => {
        const { endpoint, secret } = await w.rotateSecret(projectIdOf(req.projectId), req.endpointId);
        return { endpoint: toProtoEndpoint(endpoint), secret };
      },
      resendDelivery: async (req: webhooks.DeliveryRef): Promise<webhooks.Delivery> =>
        toProtoDelivery(await w.resend(projectIdOf(req.projectId), req.endpointId, req.deliveryId)),
      listEndpoints: async (req: webhooks.ListEndpointsRequest) => ({
        endpoints: (await w.list(projectIdOf(req.projectId))).map(toProtoEndpoint),
      }),
      deleteEndpoint: async (req: webhooks.EndpointRef) => {
        await w.remove(projectIdOf(req.projectId), req.endpointId);
        return {};
      },
      listDeliveries: async (req: webhooks.ListDeliveriesRequest): Promise<webhooks.ListDeliveriesResponse> => {
        const found = await w.deliveries(projectIdOf(req.projectId), req.endpointId, limitOf(req.limit, 50, 200));
        return { deliveries: found.map(toProtoDelivery) };
      },
    },
    log,
  );
}
