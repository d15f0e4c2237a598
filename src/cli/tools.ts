/**
 * The research commands (`eval`, `bench`) and everything they pull in (the evaluation harness,
 * dataset loaders, the vectra peer with its own tokenizer). `main.ts` loads this module only when
 * one of them runs, and the build writes it to its own bundle (dist/cliTools.js), so `canopy ask`
 * and `canopy index` neither read nor initialise any of it.
 */
export { evalHelp, runEvalCommand } from './commands/eval';
export { benchHelp, runBench } from './commands/bench';
