/**
 * The plural of a service's `effects.noun`, for the sentences retrysim writes
 * in the service's own words ("2 ledger entries", not "2 ledger entrys").
 * English's regular rules only: a consonant + y takes -ies; s, x, z, ch and
 * sh take -es; everything else -s. The last word of a several-word noun is
 * the one that changes.
 *
 * @example
 * plural('payment') // 'payments'
 * plural('ledger entry') // 'ledger entries'
 */
export function plural(noun: string): string {
  if (/[^aeiou]y$/i.test(noun)) return `${noun.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/i.test(noun)) return `${noun}es`;
  return `${noun}s`;
}
