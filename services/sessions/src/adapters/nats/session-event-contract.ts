import type { AsProtoJson, Assignable, SessionEventType, sessions } from "@bas/proto";
import type * as events from "../../domain/events";

/**
 * Compile-time check that the session events' data is the JSON of the proto messages other services decode them as
 * (`sessions.TaskStopped.fromJSON(event.data)`), and that the domain's event types are exactly the published ones;
 * a drift fails the type-check here.
 */
type Data<E extends events.SessionEvent> = AsProtoJson<E["data"]>;
export type SessionEventContract = [
  Assignable<events.SessionEventType, SessionEventType>,
  Assignable<SessionEventType, events.SessionEventType>,
  Assignable<Data<events.SessionCreated>, sessions.SessionCreated>,
  Assignable<Data<events.TaskDispatched>, sessions.TaskDispatched>,
  Assignable<Data<events.SandboxReady>, sessions.SandboxReady>,
  Assignable<Data<events.SandboxFailed>, sessions.SandboxFailed>,
  Assignable<Data<events.TaskStarted>, sessions.TaskStarted>,
  Assignable<Data<events.StepRecorded>, sessions.StepRecorded>,
  Assignable<Data<events.UsageReported>, sessions.UsageReported>,
  Assignable<Data<events.TaskCompleted>, sessions.TaskCompleted>,
  Assignable<Data<events.TaskFailed>, sessions.TaskFailed>,
  Assignable<Data<events.TaskStopped>, sessions.TaskStopped>,
  Assignable<Data<events.SessionStopped>, sessions.SessionStopped>,
  Assignable<Data<events.SessionTimedOut>, sessions.SessionTimedOut>,
  Assignable<Data<events.SessionDeleted>, sessions.SessionDeleted>,
  Assignable<Data<events.RecordingAdded>, sessions.RecordingAdded>,
  Assignable<Data<events.MessageQueued>, sessions.MessageQueued>,
  Assignable<Data<events.QueuedMessageCancelled>, sessions.QueuedMessageCancelled>,
  Assignable<Data<events.SessionReopened>, sessions.SessionReopened>,
  Assignable<Data<events.MailReceived>, sessions.MailReceived>,
];
