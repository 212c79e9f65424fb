#!/usr/bin/env node
import { run } from './program.js';

void run(process.argv);
