import { describe, expect, it } from 'vitest';
import { isTerminusError } from '../../src/core/errors.js';
import { checkTarget, isRefusedAddress, parseWebhookUrl } from '../../src/webhooks/policy.js';
import { retryDelay, DEFAULT_RETRY_SCHEDULE_MS, parseSchedule } from '../../src/webhooks/schedule.js';
import { checkSecret, sign, verify } from '../../src/webhooks/sign.js';

describe('Standard Webhooks signing', () => {
  it('matches the example of the Standard Webhooks reference libraries', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const signature = sign(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}');
    expect(signature).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
    expect(
      verify(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}', `v1,bad ${signature}`),
    ).toBe(true);
    expect(verify(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265331, '{"test": 2432232314}', signature)).toBe(false);
  });

  it('refuses a secret without the prefix, with bad base64, or too short', () => {
    for (const bad of ['MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'whsec_***', 'whsec_c2hvcnQ=']) {
      expect(() => checkSecret(bad), bad).toThrow(/whsec_/);
    }
  });
});

describe('webhook target policy', () => {
  it('refuses private, loopback, link-local, unspecified and mapped addresses; allows public ones', () => {
    for (const address of [
      '127.0.0.1',
      '10.0.0.8',
      '172.20.1.1',
      '192.168.1.1',
      '169.254.169.254',
      '0.0.0.0',
      '::1',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '100.64.0.1',
    ]) {
      expect(isRefusedAddress(address), address).toBe(true);
    }
    for (const address of ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946', '8.8.8.8']) {
      expect(isRefusedAddress(address), address).toBe(false);
    }
  });

  it('checks every address a name resolves to, unless the operator allows the host', async () => {
    const refused = await checkTarget(parseWebhookUrl('http://localhost:8080/x'), {}).catch((e: unknown) => e);
    expect(isTerminusError(refused, 'invalid_argument')).toBe(true);
    expect(String((refused as Error).message)).toMatch(/loopback.*--webhook-allow-host localhost/);
    await expect(
      checkTarget(parseWebhookUrl('http://localhost:8080/x'), { allowHosts: ['localhost'] }),
    ).resolves.not.toHaveLength(0);
    await expect(checkTarget(parseWebhookUrl('http://[::1]:8080/x'), {})).rejects.toThrow(/loopback/);
  });

  it('parses only http(s) URLs without credentials', () => {
    expect(() => parseWebhookUrl('file:///etc/passwd')).toThrow(/http:\/\/ or https:\/\//);
    expect(() => parseWebhookUrl('https://user:pw@example.com/')).toThrow(/credentials/);
    expect(() => parseWebhookUrl('::')).toThrow(/does not parse/);
  });
});

describe('retry schedule', () => {
  it('retries for more than 24 h by default even at the shortest jitter, each wait within +-10%, then gives up', () => {
    const attempts = DEFAULT_RETRY_SCHEDULE_MS.map((_, i) => i + 1);
    const shortest = attempts.reduce((sum, n) => sum + retryDelay(DEFAULT_RETRY_SCHEDULE_MS, n, { next: () => 0 })!, 0);
    expect(shortest).toBeGreaterThan(24 * 3_600_000);
    const low = retryDelay(DEFAULT_RETRY_SCHEDULE_MS, 2, { next: () => 0 });
    const high = retryDelay(DEFAULT_RETRY_SCHEDULE_MS, 2, { next: () => 0.999999 });
    expect([low, high]).toEqual([270_000, 330_000]);
    expect(retryDelay(DEFAULT_RETRY_SCHEDULE_MS, DEFAULT_RETRY_SCHEDULE_MS.length + 1, { next: () => 0.5 })).toBeNull();
    expect(parseSchedule('5s,5m,2h,250ms,100')).toEqual([5_000, 300_000, 7_200_000, 250, 100]);
    expect(() => parseSchedule('soon')).toThrow(/not a duration/);
  });
});
