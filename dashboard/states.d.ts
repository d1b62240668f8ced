/**
 * The GameServer kind's states, in its order. The server writes this module (GET
 * /dashboard/states.js) from the kind's own list, so the page keeps no copy of it.
 */
export declare const GAMESERVER_STATES: readonly string[];
