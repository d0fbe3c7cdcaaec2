/** Placeholder replaced by the database template setup (see test/helpers/database.ts). */
export default async function setup(): Promise<void> {}
