#!/usr/bin/env node
// The hostile program's Node launcher, the npm form of an agent (as Claude Code is): Node tries
// to reach out on its own, then runs the Python probes beside it, passing what it got.
const net = require("net");
const path = require("path");
const { spawnSync } = require("child_process");

let over = false;
function then(result) {
  if (over) return;
  over = true;
  const run = spawnSync("python3", [path.join(__dirname, "hostile.py")],
                        { stdio: "inherit", env: { ...process.env, HOSTILE_NODE: result } });
  process.exit(run.status === null ? 1 : run.status);
}
const socket = net.connect({ host: "1.1.1.1", port: 443 });
socket.setTimeout(3000, () => { socket.destroy(); then("blocked: timeout"); });
socket.on("connect", () => { socket.destroy(); then("reached: 1.1.1.1:443"); });
socket.on("error", (error) => then("blocked: " + error.code));
