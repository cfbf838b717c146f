// A hosted app's problems are told as an app's: `--faults` with a name it
// does not know said "valid for service <name>" to a user who typed --app.
import { describe, expect, it } from 'vitest';
import { parseServiceFaults } from '../service/campaign.js';
import { appService } from './define.js';
import { descriptor } from './fixtures/accepted-later.js';

describe('words for a hosted app', () => {
  it('--faults with an unknown name lists what is valid for the app', () => {
    expect(() => parseServiceFaults(appService(descriptor(false)), 'loseResponse,teleport')).toThrow(/^--faults: unknown fault 'teleport'; valid for app accepted-later: loseResponse, crash,/);
  });
});
