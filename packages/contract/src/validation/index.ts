/** Validation of record data against its knowledge topic's form-js schema, conditions of any form included. */
import { unaryTest } from 'feelin';
import { useConditionEvaluator } from './conditions.js';

// Loaded with the validation, so that validating against any form stays synchronous.
useConditionEvaluator(unaryTest);

export * from './checks.js';
