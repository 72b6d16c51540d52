#!/bin/bash
cat > /app/duration.js <<'JS'
'use strict';

/** "1h30m" -> 5400: hours, minutes and seconds, in that order. */
function parseDuration(text) {
  const match = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(text);
  if (!match || text === '') {
    throw new Error(`not a duration: ${JSON.stringify(text)}`);
  }
  const [hours, minutes, seconds] = match.slice(1).map((part) => Number(part || 0));
  return hours * 3600 + minutes * 60 + seconds;
}

module.exports = { parseDuration };
JS
