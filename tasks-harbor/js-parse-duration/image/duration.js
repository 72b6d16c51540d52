'use strict';

const SECONDS = { h: 3600, m: 60, s: 1 };

/** "1h30m" -> 5400: hours, minutes and seconds, in that order. */
function parseDuration(text) {
  const match = /(\d+)([hms])/.exec(text);
  if (!match) {
    throw new Error(`not a duration: ${JSON.stringify(text)}`);
  }
  return Number(match[1]) * SECONDS[match[2]];
}

module.exports = { parseDuration };
