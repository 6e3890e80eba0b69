// SPIR-V -> WGSL with naga (npm naga-wasm), for tilec's webgpu target (compiler/targets/webgpu.py).
// usage: node naga_wgsl.mjs NAGA_WASM_DIR < kernel.spv > kernel.wgsl
// naga parses and validates the module first; a failure prints naga's message and exits 1.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import path from "node:path";

const naga = await import(pathToFileURL(path.join(process.argv[2], "dist", "node.js")).href);
const words = new Uint8Array(readFileSync(0));
try {
  const module = naga.parseSpirv(words);
  const info = naga.validate(module);
  process.stdout.write(naga.writeWgsl(module, info));
} catch (error) {
  process.stderr.write(`naga ${naga.nagaVersion}: ${error.kind ?? ""} ${error.formatted ?? error.message}\n`);
  process.exit(1);
}
