/**
 * Builds the configured sinks. The registry keeps each type's module lazy, so that reading settings
 * loads no sink; this module, imported only where sinks are built, loads them all once (top-level
 * await) so that {@link createSinks} stays synchronous.
 */
import type { Sink } from '../../core/alert.js';
import { SINK_REGISTRY, SINK_TYPES, type SinkConfig, type SinkType } from './registry.js';
import type { SinkDeps } from './sink-factory.js';

type AnyFactory = (config: SinkConfig, deps: SinkDeps) => Sink;

const FACTORIES: ReadonlyMap<SinkType, AnyFactory> = new Map(
  await Promise.all(
    SINK_TYPES.map(async (type) => {
      const module = await SINK_REGISTRY[type].load();
      // TypeScript cannot tie a config's type to its settings through the map; the registry's type does.
      return [type, module.fromConfig as AnyFactory] as const;
    }),
  ),
);

/** Builds every configured sink, in configuration order. */
export function createSinks(configs: readonly SinkConfig[], deps: SinkDeps): Sink[] {
  return configs.map((c) => (FACTORIES.get(c.type) as AnyFactory)(c, deps));
}
