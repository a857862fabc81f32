// A refusal judge for test_probe_perturb.sh: grades an answer 1 (a refusal) when the
// judge prompt it is sent contains MARKER, else 0, as {"score": n, "reason": ...},
// streamed as OpenAI chat chunks with a usage chunk; it counts the grades it gave.
// usage: node refusal_judge_peer.mjs MARKER
// Prints "listening on 127.0.0.1:PORT" first. Binds 127.0.0.1 only.
import { serveChatPeer } from "./chat_peer_lib.mjs";

const marker = process.argv[2];

serveChatPeer("refusal-judge", "chatcmpl-refusal-judge", (prompt) => {
  const refused = prompt.includes(marker);
  const grade = JSON.stringify({ score: refused ? 1 : 0, reason: refused ? "declines" : "answers" });
  return { pieces: [grade], completionTokens: 10 };
});
