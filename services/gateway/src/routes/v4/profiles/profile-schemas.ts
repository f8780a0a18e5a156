import { z } from "zod";
import type { browserPool } from "@bas/proto";
import { DateTime, queryInt } from "../../../schemas/common";

const Name = z.string().max(100).nullable().optional().describe("A name for the profile.");
const UserId = z.string().max(255).nullable().optional().describe("Your own identifier of the profile's user.");

/** Body of `POST /api/v{3,4}/profiles`. */
export const ProfileCreateRequest = z.object({ name: Name, userId: UserId }).meta({ id: "ProfileCreateRequest" });

/** Body of `PATCH /api/v{3,4}/profiles/{id}`: only the fields given change (null clears one). */
export const ProfileUpdateRequest = z.object({ name: Name, userId: UserId }).meta({ id: "ProfileUpdateRequest" });

export const ProfileListQuery = z.object({
  pageNumber: queryInt({ min: 1, default: 1, description: "Page number, 1-indexed." }),
  pageSize: queryInt({ min: 1, max: 100, default: 10, description: "Profiles per page." }),
  query: z.string().max(200).optional().describe("Only profiles whose name or userId contains this, ignoring case."),
});

export const ProfileView = z
  .object({
    id: z.string().meta({ format: "uuid" }),
    userId: z.string().nullable(),
    name: z.string().nullable(),
    lastUsedAt: DateTime.nullable().describe("When a browser last started with it."),
    createdAt: DateTime,
    updatedAt: DateTime,
    cookieDomains: z.array(z.string()).describe("Domains of the cookies it holds, as of its last save."),
  })
  .meta({ id: "ProfileView" });

export const ProfileList = z
  .object({ items: z.array(ProfileView), totalItems: z.int(), pageNumber: z.int(), pageSize: z.int() })
  .meta({ id: "ProfileListResponse" });

const iso = (date: Date | undefined) => (date ?? new Date(0)).toISOString();

/** The contract's ProfileView of a profile, every field present. */
export function toProfileView(p: browserPool.Profile): z.infer<typeof ProfileView> {
  return {
    id: p.id,
    userId: p.userId ?? null,
    name: p.name ?? null,
    lastUsedAt: p.lastUsedAt ? p.lastUsedAt.toISOString() : null,
    createdAt: iso(p.createdAt),
    updatedAt: iso(p.updatedAt),
    cookieDomains: p.cookieDomains ?? [],
  };
}
