;; The pre-filter's candidate finder (trigger.ts, issue 17): one pass over a batch's joined text
;; sixteen bytes at a time, listing the positions where a branch of TRIGGER may start. It decides
;; nothing: every position it lists is confirmed in JavaScript by the same functions the passes
;; use, so it only has to be a superset of what those passes look at.
;;
;; Memory: bytes 0..255 say which bytes are base64's characters and 256..511 which may lead a
;; run of base64 of text (the loader writes both: base64.ts's B64 and TEXT_LEAD); the text's
;; Latin-1 bytes start at 1024, followed by at least 32 zero bytes; the candidates are written at
;; `out` as pairs of i32 (kind, position), position counted from the text's start:
;;   kind 0: a position to confirm by its character (':', '=', '@', '_', '-', 'S', 'k', 'J', 'P',
;;           'B', 'b', 'A': each anchor the passes search for, or its first character);
;;   kind 1 + 16 × length: a whole run of 16 to 8192 of [A-Za-z0-9+/_-] (base64's characters)
;;           whose every fourth character from its start may lead base64 of text (leadsLikeText),
;;           at its start;
;;   kind 2: a position inside a run of at least 10 of [0-9 -] (a card number's characters).
;; `out` must have room for 8 × (len + 2 × len / 16 + 40) bytes. Returns the number of pairs.
;;
;; Compiled by scripts/gen-prefilter-wasm.mjs into prefilter-wasm.ts (a test holds the two equal).
(module
  (memory (export "mem") 1)
;; Each byte is classified by two table lookups, on its low and its high four bits (a bit of
;; the class is set when both tables set it): bits 0-4 an anchor, bits 5-6 a card character.
;;   bit 0  high 3, low A D: ':' '='        bit 1  high 4, low 0 1 2 A: '@' 'A' 'B' 'J'
;;   bit 2  high 5, low 0 3 F: 'P' 'S' '_'  bit 3  high 6, low 2: 'b'
;;   bit 4  high 2, low D: '-'              bit 5  high 3, low 0-9: digits
;;   bit 6  high 2, low 0 D: ' ' '-'
;; and by two more for base64's characters (any bit): high 4 6 low 1-F, high 5 7 low 0-A (letters),
;; high 3 low 0-9, high 2 low B D F ('+' '-' '/'), high 5 low F ('_').
  (func (export "scan") (param $len i32) (param $out i32) (result i32)
    (local $p i32) (local $end i32) (local $o i32) (local $m i32) (local $c i32) (local $pc i32)
    (local $v v128) (local $cls v128) (local $w i64) (local $r i64) (local $b i32) (local $pb i32) (local $q i32) (local $a i32) (local $e i32) (local $floor i32) (local $j i32)
    (local.set $p (i32.const 1024))
    (local.set $end (i32.add (i32.const 1024) (local.get $len)))
    (local.set $o (local.get $out))
    (block $done
      (loop $chunk
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $v (v128.load (local.get $p)))
        (local.set $cls (v128.and
          (i8x16.swizzle (v128.const i8x16 102 34 42 36 32 32 32 32 32 32 3 0 0 81 0 4)
            (v128.and (local.get $v) (v128.const i8x16 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15)))
          (i8x16.swizzle (v128.const i8x16 0 0 80 33 2 4 8 0 0 0 0 0 0 0 0 0)
            (i8x16.shr_u (local.get $v) (i32.const 4)))))
        (local.set $m (i8x16.bitmask (i8x16.gt_u (v128.and (local.get $cls) (v128.const i8x16 31 31 31 31 31 31 31 31 31 31 31 31 31 31 31 31)) (v128.const i64x2 0 0))))
        ;; ks.sl (hooks.slack) at its k: a 'k' alone is in too many words
        (local.set $m (i32.or (local.get $m) (i8x16.bitmask (v128.and
          (i8x16.eq (local.get $v) (v128.const i8x16 107 107 107 107 107 107 107 107 107 107 107 107 107 107 107 107))
          (i8x16.eq (v128.load offset=1 (local.get $p)) (v128.const i8x16 115 115 115 115 115 115 115 115 115 115 115 115 115 115 115 115))))))
        (block $listed
          (loop $each
            (br_if $listed (i32.eqz (local.get $m)))
            (i32.store (local.get $o) (i32.const 0))
            (i32.store offset=4 (local.get $o) (i32.sub (i32.add (local.get $p) (i32.ctz (local.get $m))) (i32.const 1024)))
            (local.set $o (i32.add (local.get $o) (i32.const 8)))
            (local.set $m (i32.and (local.get $m) (i32.sub (local.get $m) (i32.const 1))))
            (br $each)))
        ;; [0-9 -]: a run of 10 in this chunk and the one before (bit i: bytes i..i+9 of the pair)
        (local.set $c (i8x16.bitmask (i8x16.gt_u (v128.and (local.get $cls) (v128.const i8x16 96 96 96 96 96 96 96 96 96 96 96 96 96 96 96 96)) (v128.const i64x2 0 0))))
        (local.set $w (i64.or (i64.extend_i32_u (local.get $pc)) (i64.shl (i64.extend_i32_u (local.get $c)) (i64.const 16))))
        (local.set $r (i64.and (local.get $w) (i64.shr_u (local.get $w) (i64.const 1))))
        (local.set $r (i64.and (local.get $r) (i64.shr_u (local.get $r) (i64.const 2))))
        (local.set $r (i64.and (local.get $r) (i64.shr_u (local.get $r) (i64.const 4))))
        (local.set $r (i64.and (local.get $r) (i64.shr_u (local.get $r) (i64.const 2))))
        (if (i64.ne (local.get $r) (i64.const 0))
          (then
            (i32.store (local.get $o) (i32.const 2))
            (i32.store offset=4 (local.get $o)
              (i32.sub (i32.add (local.get $p) (i32.wrap_i64 (i64.ctz (local.get $r)))) (i32.const 1040)))
            (local.set $o (i32.add (local.get $o) (i32.const 8)))))
        ;; base64: a run of 16 in this chunk and the one before
        (local.set $b (i8x16.bitmask (i8x16.gt_u
          (v128.and
            (i8x16.swizzle (v128.const i8x16 6 7 7 7 7 7 7 7 7 7 3 9 1 9 1 25)
              (v128.and (local.get $v) (v128.const i8x16 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15)))
            (i8x16.swizzle (v128.const i8x16 0 0 8 4 1 18 1 2 0 0 0 0 0 0 0 0)
              (i8x16.shr_u (local.get $v) (i32.const 4))))
          (v128.const i64x2 0 0))))
        (local.set $w (i64.or (i64.extend_i32_u (local.get $pb)) (i64.shl (i64.extend_i32_u (local.get $b)) (i64.const 16))))
        (local.set $r (i64.and (local.get $w) (i64.shr_u (local.get $w) (i64.const 1))))
        (local.set $r (i64.and (local.get $r) (i64.shr_u (local.get $r) (i64.const 2))))
        (local.set $r (i64.and (local.get $r) (i64.shr_u (local.get $r) (i64.const 4))))
        (local.set $r (i64.and (local.get $r) (i64.shr_u (local.get $r) (i64.const 8))))
        ;; read the run whole, once (it is listed again for every chunk it spans)
        (if (i64.ne (local.get $r) (i64.const 0))
          (then
            (local.set $q (i32.sub (i32.add (local.get $p) (i32.wrap_i64 (i64.ctz (local.get $r)))) (i32.const 16)))
            (if (i32.ge_u (local.get $q) (local.get $floor))
              (then
                (local.set $a (local.get $q))
                (block $back (loop $more
                  (br_if $back (i32.le_u (local.get $a) (i32.const 1024)))
                  (br_if $back (i32.eqz (i32.load8_u (i32.load8_u (i32.sub (local.get $a) (i32.const 1))))))
                  (local.set $a (i32.sub (local.get $a) (i32.const 1)))
                  (br $more)))
                (local.set $e (i32.add (local.get $q) (i32.const 1)))
                (block $fwd (loop $more
                  (br_if $fwd (i32.ge_u (local.get $e) (local.get $end)))
                  (br_if $fwd (i32.eqz (i32.load8_u (i32.load8_u (local.get $e)))))
                  (local.set $e (i32.add (local.get $e) (i32.const 1)))
                  (br $more)))
                (local.set $floor (local.get $e))
                (if (i32.and
                      (i32.ge_u (i32.sub (local.get $e) (local.get $a)) (i32.const 16))
                      (i32.le_u (i32.sub (local.get $e) (local.get $a)) (i32.const 8192)))
                  (then
                    (local.set $j (local.get $a))
                    (block $leads (loop $lead
                      (br_if $leads (i32.ge_u (local.get $j) (i32.sub (local.get $e) (i32.const 1))))
                      (br_if $leads (i32.eqz (i32.load8_u offset=256 (i32.load8_u (local.get $j)))))
                      (local.set $j (i32.add (local.get $j) (i32.const 4)))
                      (br $lead)))
                    (if (i32.ge_u (local.get $j) (i32.sub (local.get $e) (i32.const 1)))
                      (then
                        (i32.store (local.get $o)
                          (i32.or (i32.const 1) (i32.shl (i32.sub (local.get $e) (local.get $a)) (i32.const 4))))
                        (i32.store offset=4 (local.get $o) (i32.sub (local.get $a) (i32.const 1024)))
                        (local.set $o (i32.add (local.get $o) (i32.const 8)))))))))))
        (local.set $pb (local.get $b))
        (local.set $pc (local.get $c))
        (local.set $p (i32.add (local.get $p) (i32.const 16)))
        (br $chunk)))
    (i32.div_u (i32.sub (local.get $o) (local.get $out)) (i32.const 8)))
)
