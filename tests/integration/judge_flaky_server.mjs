// A scripted judge whose answers change between asks: the peer for the repeats part
// of test_eval_judge.sh (`sim serve --responses` answers one prompt always the same).
// usage: node judge_flaky_server.mjs SCRIPT.jsonl
// SCRIPT: one {"prompt": ..., "responses": [...]} per line; the k-th request whose last
// user message is `prompt` gets responses[k % n], streamed as OpenAI chat chunks with
// a usage chunk. Prints "listening on 127.0.0.1:PORT" first. Binds 127.0.0.1 only.
import fs from "node:fs";

import { serveChatPeer } from "./chat_peer_lib.mjs";

const script = new Map();
for (const line of fs.readFileSync(process.argv[2], "utf8").split("\n")) {
  if (!line.trim()) continue;
  const o = JSON.parse(line);
  script.set(o.prompt, { responses: o.responses, asked: 0 });
}

// Word by word, a completion token a word.
function words(text) {
  const pieces = text.split(/(?<= )/);
  return { pieces, completionTokens: pieces.length };
}

serveChatPeer("flaky-judge", "chatcmpl-judge", (prompt) => {
  const entry = script.get(prompt);
  if (!entry) return words("no script for this prompt");
  return words(entry.responses[entry.asked++ % entry.responses.length]);
});
