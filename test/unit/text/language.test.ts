// The language of questions and documents (src/core/text/language.ts): an n-gram detector
// confirmed by stop words, so short lower-case English questions stay English, and the terms a
// text is read with in another language drop that language's stop words, unstemmed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { detectLanguage, englishRules, languageName, termsIn } from '../../../src/core/text/language';

describe('detectLanguage', () => {
  it('reads short lower-case search questions as English (no question mark, no capitals)', () => {
    for (const q of ['who got the first nobel prize in physics', 'when was the last time the eagles won the superbowl', 'how many episodes in season 2 of the crown', 'where does the river thames start']) {
      assert.equal(detectLanguage(q).code, 'eng', q);
    }
  });

  it('reads German, French and Spanish questions as those languages', () => {
    assert.equal(detectLanguage('Wie hoch war der Umsatz der Firma im Jahr 2017?').code, 'deu');
    assert.equal(detectLanguage('Wann wurde die Firma gegründet und wer war der erste Vorstand?').code, 'deu');
    assert.equal(detectLanguage('qui a écrit les misérables et quand').code, 'fra');
    assert.equal(detectLanguage('¿Cuál fue el ingreso total de la empresa en 2021?').code, 'spa');
  });

  it('is undetermined for text too short to tell', () => {
    assert.equal(detectLanguage('2017').code, 'und');
    assert.equal(detectLanguage('').code, 'und');
    assert.ok(englishRules('und'));
    assert.ok(!englishRules('deu'));
  });

  it('reads German terms without German stop words, unstemmed; English terms as before', () => {
    const german = termsIn('deu')('Wie hoch war der Umsatz im Jahr 2017');
    for (const t of ['umsatz', '2017']) assert.ok(german.includes(t), t);
    for (const t of ['wie', 'war', 'der', 'im']) assert.ok(!german.includes(t), t);
    assert.ok(!termsIn('deu')('die Firma und der Vorstand').includes('die'));
    assert.deepEqual(termsIn('eng')('the revenues of the companies'), ['revenu', 'compani']);
    assert.equal(languageName('deu'), 'German');
  });
});
