'use strict';

const assert = require('node:assert');
const test = require('node:test');
const { parseDuration } = require('/app/duration.js');

test('one unit', () => {
  assert.strictEqual(parseDuration('45s'), 45);
  assert.strictEqual(parseDuration('3m'), 180);
  assert.strictEqual(parseDuration('2h'), 7200);
});

test('several units add up', () => {
  assert.strictEqual(parseDuration('1h30m'), 5400);
  assert.strictEqual(parseDuration('2h5s'), 7205);
  assert.strictEqual(parseDuration('1h1m1s'), 3661);
  assert.strictEqual(parseDuration('90m'), 5400);
});

test('what is not a duration throws', () => {
  for (const text of ['', '5', '1m1h', '1.5h', 'h', '1h 30m', '1d']) {
    assert.throws(() => parseDuration(text), Error, JSON.stringify(text));
  }
});
