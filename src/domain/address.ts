/** A hex address as the transfer vocabulary spells it (viem's `Address` is the same template type). */
export type Address = `0x${string}`;
