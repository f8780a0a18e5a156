import { rewriteTargetList, rewriteVersion } from "./devtools-json";

const id = "5f0c6c1e-8a43-4d5e-9a3b-1c2d3e4f5a6b";
const secret = "abcdefghijklmnopqrstuvwxyz012345";

test("DevTools JSON is re-addressed to the proxy and loses the front-end links", () => {
  const cdpUrl = `ws://proxy:9223/cdp/${id}/${secret}`;
  expect(
    rewriteVersion({ Browser: "Chrome/156", webSocketDebuggerUrl: "ws://127.0.0.1:1/devtools/browser/g" }, cdpUrl),
  ).toEqual({
    Browser: "Chrome/156",
    webSocketDebuggerUrl: cdpUrl,
  });
  const list = rewriteTargetList(
    [
      {
        id: "T1",
        type: "page",
        devtoolsFrontendUrl: "/devtools/inspector.html?ws=127.0.0.1:1/devtools/page/T1",
        webSocketDebuggerUrl: "ws://127.0.0.1:1/devtools/page/T1",
      },
    ],
    cdpUrl,
  );
  expect(list).toEqual([{ id: "T1", type: "page", webSocketDebuggerUrl: `${cdpUrl}/devtools/page/T1` }]);
});
