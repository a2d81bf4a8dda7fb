/** JSON's structural characters as bytes (char codes), for the scanners that walk JSON without parsing it. */
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const OPEN_OBJ = 0x7b;
export const CLOSE_OBJ = 0x7d;
export const OPEN_ARR = 0x5b;
export const CLOSE_ARR = 0x5d;
