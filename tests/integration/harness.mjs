// Tiny TAP-like harness shared by the node integration clients: each check prints
// "ok - NAME" or "not ok - NAME" with the error, and a failure sets the exit code.
export async function check(name, fn) {
  try {
    await fn();
    console.log(`ok - ${name}`);
  } catch (e) {
    console.error(`not ok - ${name}\n${e.stack || e}`);
    process.exitCode = 1;
  }
}
