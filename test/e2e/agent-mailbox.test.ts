import { createTransport } from "nodemailer";
import { VERIFY_TEXTS } from "../fixtures/sites";
import { indexOf, offeredTools, promptText, toolCallReply, toolCallsReply } from "../support/scripted-llm";
import { type AgentStack, startAgentStack } from "./support/agent-stack";

let stack: AgentStack;
beforeAll(async () => {
  stack = await startAgentStack();
});
afterAll(() => stack?.close());

/** Sends one mail over SMTP to the stack, as the site's mail server would; rejects with the reply (`responseCode`). */
function sendMail(to: string, subject: string, text: string) {
  const transport = createTransport({ host: stack.smtp.host, port: stack.smtp.port, secure: false, ignoreTLS: true });
  return transport
    .sendMail({ from: "Fixture Shop <no-reply@shop.test>", to, subject, text })
    .finally(() => transport.close());
}

async function refusal(sending: Promise<unknown>): Promise<{ responseCode?: number }> {
  try {
    await sending;
  } catch (err) {
    return err as { responseCode?: number };
  }
  throw new Error("the mail was accepted but should have been refused");
}

test("the agent waits for the verification mail sent to its inboxEmail and types the code into the site", async () => {
  const { llm, sites } = stack;
  const code = sites.verificationCode("mailbox-e2e");
  let inboxEmail = "";
  llm.script("gpt-4o", [
    toolCallReply("go_to_url", { url: `${sites.url}/verify/mailbox-e2e/` }),
    () => {
      // The site's mail goes out while the agent waits for it.
      setTimeout(() => {
        // A failed send shows as the agent's wait running out.
        sendMail(inboxEmail, "Your verification code", `Hello! Your code is ${code}. It expires in 10 minutes.`).catch(
          () => undefined,
        );
      }, 500);
      return toolCallReply("wait_for_email", { subject: "verification", seconds: 60 });
    },
    (req) =>
      toolCallsReply([
        {
          name: "input_text",
          arguments: { index: indexOf(req, /<input/), text: /Your code is (\d{6})/.exec(promptText(req))?.[1] ?? "" },
        },
        { name: "click", arguments: { index: indexOf(req, new RegExp(`<button>${VERIFY_TEXTS.button}<`)) } },
      ]),
    (req) =>
      toolCallReply("done", {
        success: promptText(req).includes(VERIFY_TEXTS.verified),
        text: "The email address is verified.",
      }),
  ]);
  const created = await stack.request("POST", "/api/v3/sessions", {
    task: "Finish the sign-up: open the verification page and enter the code that is emailed to you.",
    model: "gpt-4o",
    agentmail: true,
  });
  expect(created.status).toBe(200);
  expect(created.body.inboxEmail).toMatch(/^[0-9a-f]{20}@mail\.test$/);
  inboxEmail = created.body.inboxEmail;
  // The name the hosted service's clients read, asked for here as `agentmail`.
  expect(created.body.agentmailEmail).toBe(inboxEmail);

  const session = await stack.waitFor(created.body.id, (s) => s.status === "stopped", 90_000);
  expect(session).toMatchObject({ isTaskSuccessful: true, inboxEmail, output: "The email address is verified." });
  // The code reached the site only through the mail: the site counts it as verified.
  expect(sites.verified("mailbox-e2e")).toBe(true);
  const first = llm.requests("gpt-4o")[0];
  expect(offeredTools(first)).toEqual(expect.arrayContaining(["list_emails", "read_email", "wait_for_email"]));
  expect(promptText(first)).toContain(inboxEmail);

  const messages = await stack.request("GET", `/api/v3/sessions/${created.body.id}/messages?limit=100`);
  expect(messages.body.messages.map((m: { summary: string | null }) => m.summary)).toContain("Waiting for an email");

  // The session has ended: its address takes no more mail.
  expect((await refusal(sendMail(inboxEmail, "Late", "too late"))).responseCode).toBe(550);
});

test("mail to an address that is no session's is refused, and a session without the option has no address", async () => {
  expect((await refusal(sendMail(`0123456789abcdef0123@${stack.smtp.domain}`, "Hi", "anyone?"))).responseCode).toBe(
    550,
  );
  stack.llm.script("gpt-4o-mini", [toolCallReply("done", { success: true, text: "ok" })]);
  const created = await stack.request("POST", "/api/v3/sessions", { task: "Say ok.", model: "gpt-4o-mini" });
  expect(created.status).toBe(200);
  expect(created.body.inboxEmail).toBeNull();
  const session = await stack.waitFor(created.body.id, (s) => s.status === "stopped");
  expect(offeredTools(stack.llm.requests("gpt-4o-mini")[0])).not.toContain("wait_for_email");
  expect(session.inboxEmail).toBeNull();
});

test("a v4 run with agentmail: its conversation gets an address, its agent is told it and reads the mail sent there", async () => {
  const { llm } = stack;
  const ADDRESS = /[0-9a-f]{20}@mail\.test/;
  llm.script("gpt-4.1", [
    (req) => {
      // The address as the agent was told it: the mail goes there while the agent waits for it.
      const told = ADDRESS.exec(promptText(req))?.[0] ?? "the agent was told no address";
      setTimeout(() => sendMail(told, "Your login code", "Your code is 424242.").catch(() => undefined), 500);
      return toolCallReply("wait_for_email", { subject: "login code", seconds: 60 });
    },
    (req) =>
      toolCallReply("done", { success: true, text: `Code ${/Your code is (\d{6})/.exec(promptText(req))?.[1]}` }),
  ]);
  const created = await stack.request("POST", "/api/v4/runs", {
    task: "Tell me the login code that is emailed to you.",
    model: "gpt-4.1",
    agentmail: true,
  });
  expect(created.status).toBe(200);
  const conversation = await stack.request("GET", `/api/v4/sessions/${created.body.sessionId}`);
  expect(conversation.body.agentmailEmail).toMatch(new RegExp(`^${ADDRESS.source}$`));
  const run = await stack.runEnded(created.body.id);
  expect(run).toMatchObject({ status: "completed", result: "Code 424242" });
  expect(promptText(llm.requests("gpt-4.1")[0])).toContain(conversation.body.agentmailEmail);

  // Without it, a conversation has no address and its agent no mail tools.
  llm.script("gpt-4.1-mini", [toolCallReply("done", { success: true, text: "ok" })]);
  const plain = await stack.request("POST", "/api/v4/runs", { task: "Say ok.", model: "gpt-4.1-mini" });
  expect((await stack.runEnded(plain.body.id)).status).toBe("completed");
  expect((await stack.request("GET", `/api/v4/sessions/${plain.body.sessionId}`)).body.agentmailEmail).toBeNull();
  expect(offeredTools(llm.requests("gpt-4.1-mini")[0])).not.toContain("wait_for_email");
});
