/**
 * Agones's names that several kinds use: the GameServer family's kinds, the labels that tie a
 * GameServer to its set and fleet, the annotations Agones and fleetsim write, and the Agones
 * release fleetsim answers as. Kind folders import these from here, never from one another.
 */

export const GAMESERVER_KIND = 'GameServer';
export const GAMESERVER_API_VERSION = 'agones.dev/v1';
export const GAMESERVERSET_KIND = 'GameServerSet';

/** Label a GameServer carries with its set's name. */
export const GAMESERVERSET_LABEL = 'agones.dev/gameserverset';
/** Label a GameServerSet and its GameServers carry with their fleet's name. */
export const FLEET_LABEL = 'agones.dev/fleet';

/** The Agones release fleetsim behaves as, and the annotation that names it on GameServers and pods. */
export const FLEETSIM_AGONES_VERSION = '1.57.0';
export const SDK_VERSION_ANNOTATION = 'agones.dev/sdk-version';


/**
 * fleetsim's own annotations (the command below, the process profile of server/sim/profiles.ts)
 * say what a GameServer's pod runs. Like a pod's command they come with the GameServer when it is
 * created (from its template) and are fixed from then on.
 */
export const FLEETSIM_ANNOTATION_PREFIX = 'fleetsim.dev/';
/** A real command line to run as the game server instead of a simulation (server/controllers/gameserver-processes.ts). */
export const COMMAND_ANNOTATION = `${FLEETSIM_ANNOTATION_PREFIX}command`;
