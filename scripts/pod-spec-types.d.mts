// Types of scripts/pod-spec-types.mjs, for the unit test that imports it.
export declare const ROOT: string;
export declare const QUANTITY_FIELDS: Record<string, string[]>;
export declare function podSpecTypes(): Record<string, Array<[string, string]>>;
export declare function formatPodSpecTypes(types: Record<string, Array<[string, string]>>): string;
