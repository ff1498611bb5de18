// Shared by the browser tests: Debian's Chromium through playwright-core, and failure counting.
"use strict";

const { chromium } = require("playwright-core");

const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";

function launch() {
  // --no-sandbox: CI runs as root in a container, where Chromium's sandbox cannot start.
  return chromium.launch({ executablePath, args: ["--no-sandbox"] });
}

let failed = 0;
function check(ok, message) {
  if (!ok) {
    failed += 1;
    console.log("FAIL " + message);
  }
}

module.exports = { launch, check, failures: () => failed };
