// The one way the pre-filter's WebAssembly text is compiled (the generator and its drift test).
import wabtInit from 'wabt';

export async function compilePrefilterWat(source) {
  const wabt = await wabtInit();
  const mod = wabt.parseWat('prefilter.wat', source, { simd: true });
  try {
    mod.validate();
    return mod.toBinary({}).buffer;
  } finally {
    mod.destroy();
  }
}
