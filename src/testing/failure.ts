/** The message a property's failure carries (for tests of the vitest helper); throws when it did not fail. */
export async function failure(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('the property did not fail');
}
