import { type EventStore, handleCommand, type Handled } from "@bas/event-store";
import { NotFoundError } from "@bas/errors";
import { cdpUrlFor, newCdpSecret } from "../domain/cdp-route";
import { type BrowserCommand, browserDecider, type BrowserState, MAX_DOWNLOADS_PER_BROWSER } from "../domain/decider";
import { keptSourceUrl, safeFileName } from "../domain/download";
import { BROWSER_AGGREGATE, type BrowserEvent, type StopReason } from "../domain/events";
import type { BrowserLimits } from "../domain/browser-limits";
import {
  type BrowserSettings,
  type BrowserSettingsInput,
  checkMetadata,
  isWarmEligible,
  proxyCredentialsOf,
  resolveSettings,
  resolveTimeoutMinutes,
  sameWindow,
  windowOf,
} from "../domain/browser-settings";
import { type BrowserView, viewFromState } from "../domain/browser-view";
import type {
  BrowserRecord,
  CdpEndpoints,
  Launched,
  Launcher,
  PoolMetrics,
  ProfileStates,
  ProjectAdmissions,
  DownloadedFile,
  DownloadWatcher,
  ScreenRecorder,
  ScreenRecording,
  StoreDownload,
  StoreRecording,
  UsageStore,
} from "./ports";
import { createAdmission } from "./admission";
import { createLiveBrowsers } from "./live-browsers";
import { BrowserUnavailableError } from "./errors";
import type { Profiles } from "./profiles";
import type { UsageReporter } from "./usage-reporter";
import type { WarmPool } from "./warm-pool";

export interface BrowserPoolConfig {
  nodeId: string;
  /** Base of the CDP URLs handed to callers (ws:// or wss://). */
  cdpPublicUrl: string;
  limits: BrowserLimits;
}

export interface BrowserPoolDeps {
  config: BrowserPoolConfig;
  store: EventStore;
  /** The project's browsers on the other nodes, for its limit. */
  admissions: ProjectAdmissions;
  cdp: CdpEndpoints;
  launcher: Launcher;
  warm: WarmPool;
  usage: UsageReporter;
  usageStore: UsageStore;
  recorder: ScreenRecorder;
  storeRecording: StoreRecording;
  downloads: DownloadWatcher;
  storeDownload: StoreDownload;
  profiles: Pick<Profiles, "open" | "close">;
  profileStates: ProfileStates;
  /** Waits until the read model has applied the event at `sequence`, so a read right after a write sees it. */
  settle(sequence: number): Promise<void>;
  /** Waits until the read model has applied every browser event stored so far (bounded; a lagging one is let be). */
  catchUp(): Promise<void>;
  /** Those of `ids` the read model shows stopped. */
  stoppedAmong(ids: readonly string[]): Promise<string[]>;
  /** How often browser timeouts are checked (default 1 s). */
  timeoutSweepMs?: number;
  metrics: PoolMetrics;
  now(): Date;
  newId(): string;
  log: { info(o: object, msg: string): void; warn(o: object, msg: string): void; error(o: object, msg: string): void };
}

export interface StopOptions {
  reason: StopReason;
  /** Why, in words, when the reason alone does not say (a crash's exit code). */
  detail?: string;
  /** A caller's stop: another project's browser is as absent as a missing one. */
  projectId?: string;
}

export interface CreateInput {
  projectId: string;
  sessionId?: string | null;
  settings?: BrowserSettingsInput;
  timeoutMinutes?: number | null;
  metadata?: Record<string, string>;
  /**
   * True once whoever asked has stopped waiting for the answer (its call was cancelled or ran out of time): a browser
   * it will never learn the id of would hold a slot of its project's limit, and its profile, until the timeout.
   */
  callerGone?: () => boolean;
}

const CALLER_GONE = "the caller stopped waiting before the browser was ready";
/** A create whose caller stopped waiting; no browser of it is left running. */
const callerGoneError = () => new BrowserUnavailableError(`${CALLER_GONE}; no browser was kept`);

const ref = (id: string) => ({ type: BROWSER_AGGREGATE, id });

/** The longest callers' CDP waits for a browser to be ready; one that has answered nothing by then is let in as is. */
const READY_WAIT_MS = 10_000;

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** The browser use cases of one node: create, acquire for a session, stop; plus the lifecycle they set off. */
export function createBrowserPool(deps: BrowserPoolDeps) {
  const { config, store, log } = deps;
  const retiring = new Set<Promise<void>>();

  const live = createLiveBrowsers({
    cdp: deps.cdp,
    usage: deps.usage,
    now: deps.now,
    onTimeout: (id) =>
      end(id, { reason: "timeout" }).catch((err) => {
        log.error({ err, browserId: id }, "timeout stop failed");
        throw err;
      }),
    sweepMs: deps.timeoutSweepMs,
    onCrash: (id, detail) => {
      log.warn({ browserId: id, detail }, "browser crashed");
      void end(id, { reason: "crash", detail }).catch((err) => log.error({ err, browserId: id }, "crash stop failed"));
    },
  });

  const admission = createAdmission({
    limits: config.limits,
    elsewhere: deps.admissions,
    local: live,
    lookAgain: async () => {
      await deps.catchUp();
      await endStoppedElsewhere();
    },
  });

  const decide = (id: string, command: BrowserCommand): Promise<Handled<BrowserEvent, BrowserState>> =>
    // A browser is requested under an id made for it (a warm browser's is never used before it is handed out).
    handleCommand(store, browserDecider, ref(id), command, {
      now: deps.now,
      newId: deps.newId,
      fresh: command.type === "RequestBrowser",
    });

  async function settled(handled: Handled<BrowserEvent, BrowserState>) {
    const last = handled.events.at(-1);
    if (last) await deps.settle(last.sequence);
  }

  /** Changes this node answered before its read model showed them: browser id → the change's sequence. */
  const unsettled = new Map<string, number>();

  /**
   * A creation or a stop answered from the aggregate, without waiting for the read model: reads of the browser on
   * this node wait for it first (`caughtUp`), so a GET right after still shows the change.
   */
  function answeredEarly(id: string, handled: Handled<BrowserEvent, BrowserState>) {
    const last = handled.events.at(-1);
    if (!last) return;
    unsettled.set(id, last.sequence);
    void deps.settle(last.sequence).finally(() => {
      if (unsettled.get(id) === last.sequence) unsettled.delete(id);
    });
  }

  /**
   * Puts a started browser in service; `release` gives back its admission slot in the same step, as from now on it is
   * counted as running. Callers' CDP gets in once its downloads are watched and `fitted` (a warm browser's window)
   * is done; a browser that cannot be fitted is stopped as crashed.
   */
  function serve(
    id: string,
    state: BrowserState,
    launched: Launched,
    release: () => void,
    fitted?: Promise<void>,
    downloads = launched.downloads ?? watchDownloads(id, launched),
  ) {
    if (state.status !== "active") throw new Error(`browser ${id} is ${state.status}, not active`);
    release();
    fitted?.catch((err) => {
      log.error({ err, browserId: id }, "a warm browser could not be fitted to its settings");
      end(id, { reason: "crash", detail: "the browser could not be fitted to its settings" }).catch((stopErr) =>
        log.error({ err: stopErr, browserId: id }, "the browser that could not be fitted could not be stopped"),
      );
    });
    live.add({
      id,
      projectId: state.projectId,
      sessionId: state.sessionId,
      startedAt: new Date(state.startedAt),
      timeoutAt: new Date(state.timeoutAt),
      cdpSecret: state.cdpSecret,
      cdpUrl: state.cdpUrl,
      launched,
      marks: { browserMs: 0, proxyBytes: 0 },
      recording: recordingOf(id, launched, state.settings),
      downloads,
      ready: readyWithin(id, Promise.all([fitted, downloads?.ready])),
      profileId: state.settings.profileId,
    });
  }

  /** Keeps what the browser downloads from now on; undefined where its files cannot be reached. */
  const watchDownloads = (id: string, launched: Launched) =>
    deps.downloads.watch(id, launched, (file) => keepDownload(id, file));

  /** `ready`, or done waiting for it after READY_WAIT_MS: a wedged browser must not hold its callers forever. */
  function readyWithin(id: string, ready: Promise<unknown>): Promise<unknown> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        log.warn({ browserId: id }, `the browser was not ready within ${READY_WAIT_MS} ms; its callers go in as it is`);
        resolve();
      }, READY_WAIT_MS);
      timer.unref();
    });
    return Promise.race([ready, late]).finally(() => clearTimeout(timer));
  }

  /** Saves a stopping browser's state into its profile and frees the profile; before its processes end. */
  async function keepProfile(id: string, profileId: string, launched: Launched) {
    const saved = await deps.profileStates.save(profileId, launched).catch((err: unknown) => {
      log.error({ err, browserId: id, profileId }, "the browser's state could not be saved into its profile");
      return undefined;
    });
    await deps.profiles
      .close(profileId, id, saved)
      .catch((err) => log.error({ err, browserId: id, profileId }, "the profile could not be closed"));
  }

  /** Downloads kept per browser on this node: more than a browser may keep are not even stored. */
  const downloadsKept = new Map<string, number>();

  /** Stores a file a browser downloaded and records it; one that cannot be kept is logged and dropped. */
  function keepDownload(id: string, file: DownloadedFile) {
    const count = downloadsKept.get(id) ?? 0;
    if (count >= MAX_DOWNLOADS_PER_BROWSER) {
      // The file stays in the browser's profile, which goes with the browser.
      log.warn({ browserId: id }, `a browser keeps at most ${MAX_DOWNLOADS_PER_BROWSER} downloads`);
      return;
    }
    downloadsKept.set(id, count + 1);
    const kept = (async () => {
      const { ref, size } = await deps.storeDownload(id, file);
      const download = {
        guid: file.guid,
        fileName: safeFileName(file.fileName),
        url: keptSourceUrl(file.url),
        size,
        ref,
      };
      await decide(id, { type: "RecordDownload", download });
    })()
      .catch((err) => log.warn({ err, browserId: id, guid: file.guid }, "a download could not be kept"))
      .finally(() => retiring.delete(kept));
    retiring.add(kept);
  }

  const recordingOf = (id: string, launched: Launched, settings: BrowserSettings) =>
    settings.record ? deps.recorder.start(id, launched, settings) : undefined;

  /** Encodes a stopped browser's recording and keeps it; a recording that fails is logged, the stop stands. */
  async function keepRecording(id: string, recording: ScreenRecording) {
    try {
      const video = await recording.finish();
      if (!video) return;
      try {
        const ref = await deps.storeRecording(id, video);
        await decide(id, { type: "SaveRecording", ref, durationMs: video.durationMs, bytes: video.bytes });
      } finally {
        await video.dispose();
      }
    } catch (err) {
      log.error({ err, browserId: id }, "the browser's recording could not be kept");
    }
  }

  /** A browser whose start could not be recorded has no owner: end it before passing the error on. */
  const disposing =
    (launched: Launched) =>
    async (err: unknown): Promise<never> => {
      await launched.dispose();
      throw err;
    };

  /** Launches (or takes a warm) browser and records it; resolves once it answers CDP. */
  async function create(input: CreateInput): Promise<{ view: BrowserView; secret: string }> {
    const asked = performance.now();
    const acquired = (source: "warm" | "cold") => deps.metrics.acquired(source, (performance.now() - asked) / 1000);
    const settings = resolveSettings(input.settings);
    const proxyCredentials = proxyCredentialsOf(input.settings);
    // A custom proxy the egress policy refuses is the caller's mistake (422), told before anything is recorded.
    if (settings.customProxy) await deps.launcher.checkCustomProxy(settings.customProxy);
    const timeoutMinutes = resolveTimeoutMinutes(input.timeoutMinutes);
    const metadata = checkMetadata(input.metadata ?? {});
    const cannotRecord = settings.record ? deps.recorder.problem() : undefined;
    if (cannotRecord) throw new BrowserUnavailableError(cannotRecord);
    const window = windowOf(settings);
    const warm = isWarmEligible(settings) ? deps.warm.take(window) : undefined;
    const id = warm?.id ?? deps.newId();
    const release = await admission.admit(input.projectId, id).catch((err) => {
      if (warm) deps.warm.putBack(warm);
      throw err;
    });
    /** Whether the browser's request is in the event store: until then the other nodes count its admission. */
    let recorded = false;
    try {
      // The admission may have waited on the other nodes; a warm browser goes back untouched (not yet rerouted).
      if (input.callerGone?.()) {
        if (warm) deps.warm.putBack(warm);
        throw callerGoneError();
      }
      const secret = newCdpSecret();
      const request = {
        projectId: input.projectId,
        sessionId: input.sessionId ?? null,
        settings,
        timeoutMinutes,
        timeoutAt: new Date(deps.now().getTime() + timeoutMinutes * 60_000).toISOString(),
        metadata,
        nodeId: config.nodeId,
        cdpSecret: secret,
        cdpUrl: cdpUrlFor(config.cdpPublicUrl, id, secret),
      };
      if (warm) {
        // Its egress route before anything is recorded: a browser that cannot be rerouted is ended, nothing is left.
        await deps.launcher.reroute(warm, settings, { proxyCredentials }).catch(disposing(warm));
        // Its window while it is recorded and answered: callers' CDP waits in the proxy until it is fitted.
        if (!sameWindow(warm.window, window)) deps.metrics.warmResized();
        const fitted = deps.launcher.resize(warm, settings);
        // A failure is dealt with once the browser is served (`serve`), or with it if it cannot be recorded.
        fitted.catch(() => undefined);
        const handled = await decide(id, {
          type: "RequestBrowser",
          request,
          launched: { handle: warm.running.handle },
        }).catch(async (err) => {
          await fitted.catch(() => undefined);
          return disposing(warm)(err);
        });
        recorded = true;
        serve(id, handled.state, warm, release, fitted);
        answeredEarly(id, handled);
        acquired("warm");
        return { view: viewFromState(id, handled.state), secret };
      }
      const { profileId } = settings;
      // Before anything is recorded: an unknown profile (404) or one in use (409) leaves no browser behind.
      const opened = profileId ? await deps.profiles.open(input.projectId, profileId, id) : undefined;
      const profileState = opened?.stateRef ?? null;
      const freeProfile = () => (profileId ? deps.profiles.close(profileId, id, undefined) : Promise.resolve());
      // Taking a profile over waits for its last holder's save (seconds): the caller may have given up meanwhile.
      if (input.callerGone?.()) {
        await freeProfile();
        throw callerGoneError();
      }
      await decide(id, { type: "RequestBrowser", request }).catch(async (err) => {
        await freeProfile();
        throw err;
      });
      recorded = true;
      let launched: Launched;
      let downloads: ReturnType<typeof watchDownloads>;
      /** Ends a launched browser nobody will be served, its downloads no longer watched. */
      const abandon = (err: unknown): Promise<never> => {
        downloads?.close();
        return disposing(launched)(err);
      };
      try {
        const restore = profileState
          ? (dir: string, uid: number | undefined) => deps.profileStates.restore(profileState, dir, uid)
          : undefined;
        launched = await deps.launcher.launch(id, settings, { prepareProfile: restore, proxyCredentials });
        // Watched at once: a Chromium that has just started is slow to take a connection (tens of ms), and this one
        // then overlaps the profile's cookies and the record instead of holding the caller's CDP after the answer.
        downloads = watchDownloads(id, launched);
        if (profileState) await deps.profileStates.resume(profileState, launched).catch(abandon);
      } catch (err) {
        log.error({ err, browserId: id }, "browser launch failed");
        await settled(await decide(id, { type: "StopBrowser", reason: "crash", detail: "launch failed" }));
        await freeProfile();
        throw new BrowserUnavailableError("The browser could not be started; try again", { cause: err });
      }
      // Answered once the profile reads as open too (it was decided before the launch).
      await opened?.shown;
      /** Ends the launched browser nobody will use, and frees its profile. */
      const discard = async () => {
        downloads?.close();
        await launched.dispose();
        await freeProfile();
      };
      if (input.callerGone?.()) {
        // Nobody would ever stop it before its timeout: it is recorded stopped by its caller and ended.
        await settled(await decide(id, { type: "StopBrowser", reason: "caller", detail: CALLER_GONE }).catch(abandon));
        await discard();
        throw callerGoneError();
      }
      const started = await decide(id, {
        type: "RecordStarted",
        nodeId: config.nodeId,
        handle: launched.running.handle,
      }).catch(abandon);
      if (started.events.length === 0) {
        // Stopped while it launched (its session ended, its caller stopped it): nobody will use it.
        await discard();
      } else {
        serve(id, started.state, launched, release, undefined, downloads);
      }
      answeredEarly(id, started);
      if (started.events.length > 0) acquired("cold");
      return { view: viewFromState(id, started.state), secret };
    } finally {
      release();
      if (!recorded) {
        deps.admissions
          .withdraw(id)
          .catch((err) => log.warn({ err, browserId: id }, "an admission not used could not be withdrawn; it expires"));
      }
    }
  }

  /**
   * Stops a browser (any node's: the owner tears it down when it sees the event). The CDP endpoint closes before this
   * resolves; the processes end right after.
   */
  async function end(
    id: string,
    {
      reason,
      detail,
      projectId,
      after,
    }: StopOptions & {
      /** Kill and clean up only once this settles (a caller's answer), so the tear-down never delays it. */
      after?: Promise<unknown>;
    },
  ): Promise<Handled<BrowserEvent, BrowserState>> {
    const entry = live.get(id);
    if (entry && projectId !== undefined && entry.projectId !== projectId) throw new NotFoundError("Browser not found");
    // Refuse CDP first, so that no client gets in once the stop is visible in the read model.
    live.suspend(id);
    let handled: Handled<BrowserEvent, BrowserState>;
    try {
      handled = await decide(id, {
        type: "StopBrowser",
        reason,
        detail,
        cdpBytesIn: entry?.endpoint.bytesIn,
        cdpBytesOut: entry?.endpoint.bytesOut,
        projectId,
      });
    } catch (err) {
      live.resume(id);
      throw err;
    }
    const finishedAt = handled.state.status === "stopped" ? new Date(handled.state.finishedAt) : deps.now();
    tearDown(id, finishedAt, after);
    return handled;
  }

  /**
   * Ends this node's browsers that the read model shows stopped: a stop recorded through another node, which this
   * node hears of (watchForeignStops) but may not have acted on yet. A count waits for this before it looks again.
   */
  async function endStoppedElsewhere(): Promise<void> {
    const stopped = await deps.stoppedAmong(live.ids());
    await Promise.all(
      stopped.map((id) =>
        end(id, { reason: "caller" }).catch((err) =>
          log.warn({ err, browserId: id }, "ending a stopped browser failed"),
        ),
      ),
    );
  }

  /** Ends this node's instance of a browser recorded as stopped; the answer to the caller does not wait for it. */
  function tearDown(id: string, finishedAt: Date, after?: Promise<unknown>) {
    const detached = live.detach(id);
    if (!detached) return;
    downloadsKept.delete(id);
    // The recording ends at the stop; only the browser's tear-down waits for the answer.
    const recorded = detached.recording && keepRecording(id, detached.recording);
    const done = Promise.resolve(after)
      .catch(() => undefined)
      .then(async () => {
        if (detached.profileId) await keepProfile(id, detached.profileId, detached.launched);
        await Promise.all([live.retire(detached, finishedAt), recorded]);
      })
      .finally(() => retiring.delete(done));
    retiring.add(done);
  }

  /**
   * The one way to stop a browser, whichever node runs it (that node tears it down when it sees the event): answers
   * its view once the read model shows the stop; this node's instance is torn down right after the answer.
   */
  async function stop(id: string, options: StopOptions): Promise<BrowserView> {
    const answered = deferred();
    try {
      const handled = await end(id, { ...options, after: answered.promise });
      await settled(handled);
      return viewFromState(id, handled.state);
    } finally {
      answered.resolve();
    }
  }

  /**
   * A caller's stop, answered from the aggregate as soon as the stop is recorded (the CDP endpoint is closed by
   * then): the caller does not wait for the read model, nor for the tear-down, which follows the answer.
   */
  async function stopNow(id: string, options: StopOptions): Promise<BrowserView> {
    const answered = deferred();
    try {
      const handled = await end(id, { ...options, after: answered.promise });
      answeredEarly(id, handled);
      return viewFromState(id, handled.state);
    } finally {
      answered.resolve();
    }
  }

  /** Resolves once the read model shows the changes this node answered early: of one browser, or of all. */
  async function caughtUp(id?: string): Promise<void> {
    const sequences = id === undefined ? [...unsettled.values()] : [unsettled.get(id) ?? 0];
    const latest = Math.max(0, ...sequences);
    if (latest > 0) await deps.settle(latest);
  }

  return {
    /** A new browser, with its CDP secret (for URLs other than the public one). */
    create,
    /** Room for one more browser of the project, checked before a session is created (nothing is taken). */
    capacity: (projectId: string) => admission.capacity(projectId),
    stop,
    stopNow,
    caughtUp,
    /** Whether this node runs the browser now. */
    runs: (id: string) => live.has(id),
    /** The browsers this node runs now. */
    running: () => live.ids(),

    /**
     * A warm browser with its downloads watched while it waits: connecting for that (a CDP connection, a command) is
     * then no part of its hand-out, where it held callers' CDP a few milliseconds more.
     */
    watchingDownloads(launched: Launched): Launched {
      const downloads = watchDownloads(launched.id, launched);
      const dispose = launched.dispose;
      return Object.assign(launched, {
        downloads,
        dispose: () => {
          // One that never served anybody ends with its watch.
          downloads?.close();
          return dispose();
        },
      });
    },

    /** Serves a browser an earlier run of this node launched (restart). */
    async adopt(row: BrowserRecord, launched: Launched): Promise<void> {
      const downloads = watchDownloads(row.id, launched);
      live.add({
        id: row.id,
        projectId: row.projectId,
        sessionId: row.sessionId,
        startedAt: row.startedAt ?? row.requestedAt,
        timeoutAt: row.timeoutAt,
        cdpSecret: row.cdpSecret,
        cdpUrl: row.cdpUrl,
        launched,
        marks: await deps.usageStore.marks(row.id),
        // What was recorded before the restart is lost; the recording goes on from here.
        recording: recordingOf(row.id, launched, row.settings),
        downloads,
        // Callers' CDP gets in once downloads are watched again, as for a new browser.
        ready: readyWithin(row.id, Promise.resolve(downloads?.ready)),
        profileId: row.settings.profileId,
      });
    },

    /** Stops every browser of this node (reason `shutdown`) and waits until they are gone. */
    async stopAll(): Promise<void> {
      live.close();
      await Promise.allSettled(live.ids().map((id) => end(id, { reason: "shutdown" })));
      await Promise.allSettled([...retiring]);
    },

    /** Leaves browsers running for the next start to adopt; only closes their endpoints. */
    async detachAll(): Promise<void> {
      live.close();
      for (const id of live.ids()) {
        // The browser stays for the next start to adopt; its egress proxy is this process's and goes with it.
        await live.detach(id)?.launched.networkProxy.close();
        deps.usage.forget(id);
      }
      await Promise.allSettled([...retiring]);
    },
  };
}

export type BrowserPool = ReturnType<typeof createBrowserPool>;
