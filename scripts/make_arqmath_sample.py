"""Write the small embedded ARQMath-format sample collection used by mathir's tests and examples.

Every question, answer, topic and relevance judgment below was written for mathir. Nothing is
copied from Math StackExchange or from the official ARQMath files; only the file formats follow
ARQMath (Posts.V1.3.xml, the v3 LaTeX formula index, Task 1/Task 2 topics and TREC qrels).

The script is deterministic and uses only the standard library:

    python scripts/make_arqmath_sample.py

Text markup used in the content tables: paragraphs are separated by blank lines and become
``<p>`` elements (unless they start with a block tag such as ``<ol>``); ``$...$`` and ``$$...$$``
become math-container spans with fresh formula ids. A line ending in ``\\\\`` (a LaTeX line
break) keeps its newline, so ``align*`` environments span several lines as on the real site.
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from xml.sax.saxutils import escape

OUT_DIR = Path(__file__).resolve().parents[1] / "mathir/samples/arqmath"

# ---------------------------------------------------------------------------
# Collection content: (subject, base tags, questions); a question is
# (key, title, extra tags, body, [answers]).
# ---------------------------------------------------------------------------

SUBJECTS = [
    (
        "derivatives",
        ["calculus", "derivatives"],
        [
            (
                "deriv-1",
                r"Derivative of $x^x$: why does the power rule give the wrong answer?",
                ["exponential-function"],
                r"""
                I tried to use the power rule on $f(x)=x^x$ and got $x\cdot x^{x-1}=x^x$.
                But when I plot the slope numerically at $x=2$ I get roughly $6.77$, not $4$.

                How should I differentiate $x^x$ for $x>0$, and why is the power rule not
                allowed here?
                """,
                [
                    r"""
                    Write $x^x=e^{x\ln x}$. By the chain rule and the product rule,
                    $$\frac{d}{dx}e^{x\ln x}=e^{x\ln x}\left(\ln x+1\right),$$
                    so $f'(x)=x^x(\ln x+1)$.

                    The power rule $\frac{d}{dx}x^n=nx^{n-1}$ only holds when the exponent is
                    a constant. Here the exponent moves together with the base. At $x=2$ the
                    correct formula gives $4(\ln 2+1)\approx 6.77$, which matches your plot.
                    """,
                    r"""
                    Use <strong>logarithmic differentiation</strong>. Put $y=x^x$ and take
                    logarithms: $\ln y=x\ln x$. Differentiating both sides implicitly gives
                    $\frac{y'}{y}=\ln x+1$, hence $y'=x^x(1+\ln x)$.

                    Notice that the result is the sum of what you get by treating the exponent as
                    a constant ($x\cdot x^{x-1}$) and what you get by treating the base as a
                    constant ($x^x\ln x$). This is a general fact for $u(x)^{v(x)}$.
                    """,
                    r"""
                    A good way to check the answer is to look at the critical point. We have
                    $f'(x)=x^x(\ln x+1)=0$ exactly when $\ln x=-1$, that is at $x=\frac{1}{e}$.
                    The graph of $x^x$ indeed has its minimum there, with value
                    $e^{-1/e}\approx 0.692$, so $f'(x)=x^x(\ln x+1)$ is consistent with the
                    picture.
                    """,
                    r"""
                    If you also need the second derivative: differentiating $x^x(\ln x+1)$ once
                    more gives $$f''(x)=x^x(\ln x+1)^2+x^{x-1}.$$ Both terms are positive for
                    $x>0$, so $x^x$ is convex on $(0,\infty)$ and the critical point
                    $x=\frac{1}{e}$ is a global minimum.
                    """,
                ],
            ),
            (
                "deriv-2",
                r"Why is the derivative of $\sin x$ equal to $\cos x$?",
                ["trigonometry"],
                r"""
                My textbook says:

                <blockquote><p>Using $\lim_{h\to 0}\frac{\sin h}{h}=1$ one shows that
                $\frac{d}{dx}\sin x=\cos x$.</p></blockquote>

                Where does that limit come from, and how does the rest of the proof go?
                """,
                [
                    r"""
                    From the addition formula,
                    $$\frac{\sin(x+h)-\sin x}{h}=\sin x\,\frac{\cos h-1}{h}+\cos x\,\frac{\sin
                    h}{h}.$$
                    As $h\to 0$ the first quotient tends to $0$ and the second to $1$, which
                    leaves $\cos x$.

                    The limit $\frac{\sin h}{h}\to 1$ comes from the squeeze
                    $\cos h\leq\frac{\sin h}{h}\leq 1$ for $0<|h|<\frac{\pi}{2}$, which you get
                    by comparing the areas of two triangles with the area of a circular sector.
                    """,
                    r"""
                    For the other limit write
                    $$\frac{\cos h-1}{h}=-\frac{\sin^2 h}{h(\cos h+1)}=-\frac{\sin
                    h}{h}\cdot\frac{\sin h}{\cos h+1},$$
                    which tends to $-1\cdot 0=0$.

                    All of this assumes the angle is measured in radians. In degrees the same
                    computation gives $\frac{d}{dx}\sin x=\frac{\pi}{180}\cos x$, which is one
                    reason radians are the natural unit in calculus.
                    """,
                    r"""
                    If you define the sine by its power series
                    $\sin x=\sum_{n=0}^\infty\frac{(-1)^n x^{2n+1}}{(2n+1)!}$, you can
                    differentiate term by term (a power series may be differentiated inside its
                    radius of convergence, here all of $\mathbb{R}$) and get
                    $\sum_{n=0}^\infty\frac{(-1)^n x^{2n}}{(2n)!}=\cos x$ directly. Then no
                    geometric limit is needed at all.
                    """,
                ],
            ),
            (
                "deriv-3",
                r"Quotient rule and product rule give different-looking derivatives",
                ["algebra-precalculus"],
                r"""
                I differentiated $f(x)=\frac{x^2+1}{x-1}$ twice. With the quotient rule I got
                $\frac{x^2-2x-1}{(x-1)^2}$, and writing $f(x)=(x^2+1)(x-1)^{-1}$ and using the
                product rule I got $\frac{2x}{x-1}-\frac{x^2+1}{(x-1)^2}$.

                Which one is correct?
                """,
                [
                    r"""
                    Both are correct. Put the second expression over the common denominator
                    $(x-1)^2$:
                    $$\frac{2x(x-1)-(x^2+1)}{(x-1)^2}=\frac{x^2-2x-1}{(x-1)^2}.$$
                    The quotient rule is nothing but the product rule combined with the chain
                    rule applied to $(x-1)^{-1}$, so the two methods must agree.
                    """,
                    r"""
                    A quick sanity check is to evaluate both forms at a point: at $x=0$ the first
                    gives $\frac{-1}{1}=-1$ and the second gives $0-\frac{1}{1}=-1$. Agreement at
                    a few points does not prove equality, but it catches most algebra slips.

                    You can also divide first: $\frac{x^2+1}{x-1}=x+1+\frac{2}{x-1}$, so
                    $f'(x)=1-\frac{2}{(x-1)^2}$, a third equivalent form.
                    """,
                ],
            ),
            (
                "deriv-4",
                r"Showing $\frac{d}{dx}\arctan x=\frac{1}{1+x^2}$",
                ["trigonometry"],
                r"""
                I know that $\frac{d}{dx}\tan x=\sec^2 x$. How can I use this to show that the
                derivative of $\arctan x$ is $\frac{1}{1+x^2}$? I am surprised that the answer
                is a rational function.
                """,
                [
                    r"""
                    Let $y=\arctan x$, so that $\tan y=x$ with
                    $y\in\left(-\frac{\pi}{2},\frac{\pi}{2}\right)$.
                    Differentiating implicitly gives $\sec^2 y\cdot y'=1$, so
                    $$y'=\frac{1}{\sec^2 y}=\frac{1}{1+\tan^2 y}=\frac{1}{1+x^2}.$$
                    The identity $\sec^2 y=1+\tan^2 y$ is exactly what turns the answer into a
                    rational function of $x$.
                    """,
                    r"""
                    Use the inverse function rule $(f^{-1})'(x)=\frac{1}{f'(f^{-1}(x))}$. With
                    $f=\tan$ we have $f'=\sec^2=1+\tan^2$, hence
                    $(f^{-1})'(x)=\frac{1}{1+\tan^2(\arctan x)}=\frac{1}{1+x^2}$.

                    Integrating back gives the well known $\int_0^1\frac{dx}{1+x^2}=\frac{\pi}{4}$.
                    """,
                    r"""
                    A picture helps: draw a right triangle with angle $y$, opposite side $x$ and
                    adjacent side $1$. The hypotenuse is $\sqrt{1+x^2}$, so
                    $\cos y=\frac{1}{\sqrt{1+x^2}}$. Since $y'=\cos^2 y$ by implicit
                    differentiation, you get $y'=\frac{1}{1+x^2}$ without any memorised identity.
                    """,
                ],
            ),
        ],
    ),
    (
        "integration-by-parts",
        ["calculus", "integration"],
        [
            (
                "ibp-1",
                r"How to integrate $\int xe^x\,dx$ by parts: which factor is $u$?",
                ["indefinite-integrals"],
                r"""
                I am learning integration by parts, $\int u\,dv=uv-\int v\,du$. For
                $\int xe^x\,dx$ I do not know whether to choose $u=x$ or $u=e^x$.

                Does the choice matter, and how do I decide in general?
                """,
                [
                    r"""
                    Choose $u=x$ and $dv=e^x\,dx$, so $du=dx$ and $v=e^x$. Then
                    $$\int xe^x\,dx=xe^x-\int e^x\,dx=xe^x-e^x+C.$$
                    With the other choice, $u=e^x$ and $dv=x\,dx$, you get
                    $\frac{x^2}{2}e^x-\int\frac{x^2}{2}e^x\,dx$, which is harder than what you
                    started with. So yes, the choice matters: $u$ should get simpler when
                    differentiated.
                    """,
                    r"""
                    A common rule of thumb is <strong>LIATE</strong>:

                    <ol><li>Logarithmic</li><li>Inverse
                    trigonometric</li><li>Algebraic</li><li>Trigonometric</li>
                    <li>Exponential</li></ol>

                    Pick as $u$ the factor that comes first in this list. Here $x$ is algebraic
                    and $e^x$ is exponential, so $u=x$. Always check the result by
                    differentiating: $\frac{d}{dx}(xe^x-e^x)=e^x+xe^x-e^x=xe^x$.
                    """,
                    r"""
                    You can avoid parts entirely by differentiating with respect to a parameter.
                    Start from $\int e^{ax}\,dx=\frac{e^{ax}}{a}$ and differentiate both sides
                    with respect to $a$:
                    $$\int xe^{ax}\,dx=\frac{xe^{ax}}{a}-\frac{e^{ax}}{a^2}.$$
                    Setting $a=1$ gives $xe^x-e^x+C$ again, and the same trick handles
                    $\int x^2e^{ax}\,dx$ with one more derivative.
                    """,
                ],
            ),
            (
                "ibp-2",
                r"Integral of $\ln x$ by parts: where is the second function?",
                ["logarithms"],
                r"""
                Integration by parts needs a product of two functions, but $\int\ln x\,dx$
                only has one. How is this integral computed?
                """,
                [
                    r"""
                    Use the invisible factor $1$. By $\int u\,dv=uv-\int v\,du$ with
                    $u=\ln x$ and $dv=dx$ we have $du=\frac{dx}{x}$ and $v=x$, so
                    $$\int\ln x\,dx=x\ln x-\int x\cdot\frac{1}{x}\,dx=x\ln x-x+C.$$
                    """,
                    r"""
                    The same trick works whenever the derivative of $f$ is simpler than $f$
                    itself: take $u=f$ and $dv=dx$. For example
                    $$\int\arctan x\,dx=x\arctan x-\frac{1}{2}\ln(1+x^2)+C,\qquad\int\arcsin
                    x\,dx=x\arcsin x+\sqrt{1-x^2}+C.$$
                    Differentiate both results to see the extra terms cancel.
                    """,
                    r"""
                    For a definite version, $\int_1^e\ln x\,dx=\left[x\ln
                    x-x\right]_1^e=(e-e)-(0-1)=1$.
                    There is a nice geometric check: the region under $\ln x$ on $[1,e]$ is the
                    rectangle $[0,e]\times[0,1]$ minus the region to the left of the curve
                    $x=e^y$, whose area is $\int_0^1e^y\,dy=e-1$. That gives $e-(e-1)=1$ as well.
                    """,
                ],
            ),
            (
                "ibp-3",
                r"Integration by parts twice on $\int e^x\sin x\,dx$ goes in circles",
                ["indefinite-integrals", "trigonometry"],
                r"""
                When I integrate $\int e^x\sin x\,dx$ by parts twice I get the original integral
                back and end up with $0=0$. Did I do something wrong?
                """,
                [
                    r"""
                    Getting the integral back is the point, but you must keep the same kind of
                    choice both times. Let $I=\int e^x\sin x\,dx$. With $u=\sin x$:
                    $$\begin{align*}
                    I&=e^x\sin x-\int e^x\cos x\,dx\\
                    &=e^x\sin x-\left(e^x\cos x+I\right).
                    \end{align*}$$
                    Solving for $I$ gives $$I=\frac{e^x(\sin x-\cos x)}{2}+C.$$ If in the
                    second step you take $u=e^x$ instead, you undo the first step and get $I=I$.
                    """,
                    r"""
                    Complex exponentials avoid the circle: $e^x\sin x=\operatorname{Im}e^{(1+i)x}$
                    and $$\int e^{(1+i)x}\,dx=\frac{e^{(1+i)x}}{1+i}=\frac{(1-i)e^x(\cos x+i\sin
                    x)}{2}.$$
                    The imaginary part of $(1-i)(\cos x+i\sin x)$ is $\sin x-\cos x$, which
                    gives the same antiderivative $\frac{e^x(\sin x-\cos x)}{2}$.
                    """,
                    r"""
                    Whatever method you use, verify by differentiating:
                    $$\frac{d}{dx}\frac{e^x(\sin x-\cos x)}{2}=\frac{e^x(\sin x-\cos x)+e^x(\cos
                    x+\sin x)}{2}=e^x\sin x.$$
                    The cross terms cancel, so the answer is right.
                    """,
                    r"""
                    More generally, for $a^2+b^2\neq 0$,
                    $$\int e^{ax}\sin(bx)\,dx=\frac{e^{ax}\left(a\sin bx-b\cos
                    bx\right)}{a^2+b^2}+C.$$
                    Your integral is the case $a=b=1$. The companion formula for
                    $\int e^{ax}\cos(bx)\,dx$ has $a\cos bx+b\sin bx$ in the numerator.
                    """,
                ],
            ),
            (
                "ibp-4",
                r"Reduction formula for $\int_0^{\pi/2}\sin^n x\,dx$",
                ["definite-integrals", "recurrence-relations"],
                r"""
                Let $I_n=\int_0^{\pi/2}\sin^n x\,dx$. How do I show that
                $I_n=\frac{n-1}{n}I_{n-2}$ for $n\geq 2$?
                """,
                [
                    r"""
                    Write $\sin^n x=\sin^{n-1}x\,\sin x$ and take $u=\sin^{n-1}x$,
                    $dv=\sin x\,dx$, $v=-\cos x$. The boundary term
                    $\left[-\sin^{n-1}x\cos x\right]_0^{\pi/2}$ vanishes for $n\geq 2$, so
                    $$I_n=(n-1)\int_0^{\pi/2}\sin^{n-2}x\cos^2x\,dx=(n-1)\left(I_{n-2}-I_n\right),$$
                    using $\cos^2x=1-\sin^2x$. Solving gives $nI_n=(n-1)I_{n-2}$.
                    """,
                    r"""
                    With $I_0=\frac{\pi}{2}$ and $I_1=1$ the recursion gives
                    $I_{2m}=\frac{(2m-1)!!}{(2m)!!}\cdot\frac{\pi}{2}$ and
                    $I_{2m+1}=\frac{(2m)!!}{(2m+1)!!}$.

                    Since $I_{2m+1}\leq I_{2m}\leq I_{2m-1}$ and the ratio of the outer two
                    tends to $1$, you obtain the Wallis product
                    $$\frac{\pi}{2}=\prod_{k=1}^\infty\frac{4k^2}{4k^2-1}.$$
                    """,
                ],
            ),
        ],
    ),
    (
        "limits",
        ["calculus", "limits"],
        [
            (
                "lim-1",
                r"Evaluate $\lim_{x\to 0}\frac{1-\cos x}{x^2}$ without L'Hôpital's rule",
                ["trigonometry"],
                r"""
                I can get $\frac{1}{2}$ by applying L'Hôpital's rule twice, but our teacher wants
                a proof that only uses $\lim_{x\to 0}\frac{\sin x}{x}=1$. How can this be done?
                """,
                [
                    r"""
                    Multiply by the conjugate:
                    $$\frac{1-\cos x}{x^2}=\frac{1-\cos^2x}{x^2(1+\cos x)}=\left(\frac{\sin
                    x}{x}\right)^2\frac{1}{1+\cos x}.$$
                    The first factor tends to $1$ and the second to $\frac{1}{2}$, so the limit
                    is $\frac{1}{2}$.
                    """,
                    r"""
                    Use the half-angle identity $1-\cos x=2\sin^2\frac{x}{2}$. Then
                    $$\frac{1-\cos
                    x}{x^2}=\frac{1}{2}\left(\frac{\sin(x/2)}{x/2}\right)^2\to\frac{1}{2}.$$
                    This is the same idea as the conjugate trick, just packaged differently.
                    """,
                    r"""
                    If Taylor expansions are allowed, $\cos x=1-\frac{x^2}{2}+O(x^4)$ gives
                    immediately $\frac{1-\cos x}{x^2}=\frac{1}{2}+O(x^2)$. This also tells you
                    how fast the quotient approaches its limit.
                    """,
                ],
            ),
            (
                "lim-2",
                r"Why does $\left(1+\frac{1}{n}\right)^n$ converge to $e$ and not to $1$?",
                ["exponential-function"],
                r"""
                Since $1+\frac{1}{n}\to 1$ and $1^n=1$ for every $n$, I expected
                $\lim_{n\to\infty}\left(1+\frac{1}{n}\right)^n=1$. Why is the limit $e$ instead?
                """,
                [
                    r"""
                    This is an indeterminate form of type $1^\infty$: the base tends to $1$ while
                    the exponent grows, and the two effects compete. Take logarithms:
                    $$n\ln\left(1+\frac{1}{n}\right)=\frac{\ln(1+1/n)}{1/n}\to\frac{d}{dt}\ln(1+t)
                    \Big|_{t=0}=1,$$
                    so the sequence tends to $e^1=e$.
                    """,
                    r"""
                    By the binomial theorem
                    $$\left(1+\frac{1}{n}\right)^n=\sum_{k=0}^n\binom{n}{k}\frac{1}{n^k}=
                    \sum_{k=0}^n\frac{1}{k!}\prod_{j=0}^{k-1}\left(1-\frac{j}{n}\right).$$
                    Each term increases with $n$ and is at most $\frac{1}{k!}$, so the sequence is
                    increasing and bounded by $\sum_{k\geq 0}\frac{1}{k!}=e$. Fixing the number
                    of terms and letting $n\to\infty$ shows that the limit is exactly $e$.
                    """,
                    r"""
                    More generally $\lim_{n\to\infty}\left(1+\frac{x}{n}\right)^n=e^x$ for every
                    real $x$; for instance $\left(1-\frac{1}{n}\right)^n\to e^{-1}$. The rate of
                    the exponent matters: $\left(1+\frac{1}{n}\right)^{n^2}\to\infty$ while
                    $\left(1+\frac{1}{n}\right)^{\sqrt{n}}\to 1$.
                    """,
                    r"""
                    Numerically the convergence is slow: $n=10$ gives $2.5937$ and $n=1000$ gives
                    $2.7169$, while $e=2.71828\ldots$. The error is about $\frac{e}{2n}$, which
                    follows from
                    $n\ln\left(1+\frac{1}{n}\right)=1-\frac{1}{2n}+O\left(\frac{1}{n^2}\right)$.
                    """,
                ],
            ),
            (
                "lim-3",
                r"Epsilon-delta proof that $\lim_{x\to 2}x^2=4$",
                ["epsilon-delta"],
                r"""
                I need to find $\delta>0$ such that $0<|x-2|<\delta$ implies
                $|x^2-4|<\varepsilon$. I factor $|x^2-4|=|x-2||x+2|$, but the factor $|x+2|$
                gets in the way. What is the standard trick?
                """,
                [
                    r"""
                    First agree that $\delta\leq 1$. Then $|x-2|<1$ forces $1<x<3$, so
                    $|x+2|<5$ and $|x^2-4|=|x-2||x+2|<5|x-2|$. Now choose
                    $$\delta=\min\left(1,\frac{\varepsilon}{5}\right).$$
                    If $0<|x-2|<\delta$ then $|x^2-4|<5\cdot\frac{\varepsilon}{5}=\varepsilon$.
                    """,
                    r"""
                    You can also avoid the preliminary bound. Since
                    $x^2-4=(x-2)^2+4(x-2)$, we get $|x^2-4|\leq|x-2|^2+4|x-2|<\delta^2+4\delta$.
                    Choosing $\delta=\sqrt{4+\varepsilon}-2$ makes $\delta^2+4\delta=\varepsilon$
                    exactly, because $(\delta+2)^2-4=\varepsilon$.
                    """,
                    r"""
                    Note that $\delta$ may depend on $\varepsilon$ and on the point $2$, but not on
                    $x$. That is why a choice like $\delta=\frac{\varepsilon}{|x+2|}$ is not
                    allowed, and why one first bounds $|x+2|$ on a neighbourhood of $2$.
                    """,
                ],
            ),
            (
                "lim-4",
                r"Does $\lim_{(x,y)\to(0,0)}\frac{xy}{x^2+y^2}$ exist?",
                ["multivariable-calculus"],
                r"""
                Along both coordinate axes the function $\frac{xy}{x^2+y^2}$ is identically $0$,
                so I guessed that the limit at the origin is $0$. Is that enough?
                """,
                [
                    r"""
                    No. Along the line $y=mx$ you get
                    $$\frac{mx^2}{(1+m^2)x^2}=\frac{m}{1+m^2},$$
                    which depends on $m$; for example it is $\frac{1}{2}$ on $y=x$. So the limit
                    does not exist. Checking a few paths can only disprove existence, never
                    prove it.
                    """,
                    r"""
                    Polar coordinates make this transparent. With $x=r\cos\theta$ and
                    $y=r\sin\theta$ we get $\frac{xy}{x^2+y^2}=\cos\theta\sin\theta=\frac{1}{2}\sin
                    2\theta$,
                    independent of $r$ but dependent on $\theta$. Compare
                    $\frac{x^2y}{x^2+y^2}=r\cos^2\theta\sin\theta$, which is bounded by $r$ and
                    therefore does tend to $0$.
                    """,
                    r"""
                    Even checking all straight lines is not enough. The classic example
                    $\frac{x^2y}{x^4+y^2}$ tends to $0$ along every line through the origin, but
                    along the parabola $y=x^2$ it is constantly $\frac{x^4}{2x^4}=\frac{1}{2}$.
                    """,
                ],
            ),
        ],
    ),
    (
        "series",
        ["sequences-and-series", "convergence-divergence"],
        [
            (
                "ser-1",
                (
                    r"Why does $\sum_{n=1}^\infty\frac{1}{n^2}$ converge"
                    r" while $\sum_{n=1}^\infty\frac{1}{n}$ diverges?"
                ),
                ["harmonic-numbers"],
                r"""
                In both series the terms go to zero. Why does the harmonic series diverge while
                $\sum_{n=1}^\infty\frac{1}{n^2}$ converges? What is the difference?
                """,
                [
                    r"""
                    Terms tending to zero is necessary but not sufficient. For the harmonic series
                    group the terms: $\frac{1}{3}+\frac{1}{4}>\frac{1}{2}$,
                    $\frac{1}{5}+\cdots+\frac{1}{8}>\frac{1}{2}$, and so on, so
                    $$\sum_{n=1}^{2^k}\frac{1}{n}\geq 1+\frac{k}{2},$$
                    which is unbounded. For the squares use
                    $\frac{1}{n^2}<\frac{1}{n(n-1)}=\frac{1}{n-1}-\frac{1}{n}$ for $n\geq 2$; the
                    telescoping sum shows that every partial sum is less than $2$.
                    """,
                    r"""
                    The integral test settles the whole family at once:
                    $\sum_{n=1}^\infty\frac{1}{n^p}$ converges if and only if
                    $\int_1^\infty\frac{dx}{x^p}<\infty$, that is iff $p>1$. For $p=1$,
                    $\int_1^N\frac{dx}{x}=\ln N\to\infty$; for $p=2$,
                    $\int_1^\infty\frac{dx}{x^2}=1$.

                    The actual value is $\sum_{n=1}^\infty\frac{1}{n^2}=\frac{\pi^2}{6}$, the
                    <a href="https://en.wikipedia.org/wiki/Basel_problem">Basel problem</a>
                    solved by Euler.
                    """,
                    r"""
                    Cauchy condensation: for a decreasing positive sequence $a_n$, the series
                    $\sum a_n$ converges iff $\sum_{k\geq 0}2^ka_{2^k}$ converges. For
                    $a_n=\frac{1}{n}$ the condensed series is $\sum 1$, which diverges; for
                    $a_n=\frac{1}{n^2}$ it is $\sum 2^{-k}$, a convergent geometric series.
                    """,
                    r"""
                    The harmonic partial sums grow like a logarithm:
                    $$H_N=\sum_{n=1}^N\frac{1}{n}=\ln
                    N+\gamma+O\left(\frac{1}{N}\right),\qquad\gamma\approx 0.5772.$$
                    So the divergence is extremely slow: you need more than $10^{43}$ terms before
                    the partial sum exceeds $100$.
                    """,
                    r"""
                    A telescoping series gives an exact comparison value:
                    $\sum_{n=1}^\infty\frac{1}{n(n+1)}=1$. Shifting the index, this is precisely
                    the bound used above,
                    $$\sum_{n=1}^\infty\frac{1}{n^2}<1+\sum_{n=2}^\infty\frac{1}{n(n-1)}=2.$$
                    """,
                ],
            ),
            (
                "ser-2",
                r"Ratio test for $\sum_{n=1}^\infty\frac{n!}{n^n}$",
                ["factorial"],
                r"""
                I want to decide whether $\sum_{n=1}^\infty\frac{n!}{n^n}$ converges. The ratio
                test leads to a limit that I cannot compute. What is the cleanest way?
                """,
                [
                    r"""
                    The ratio simplifies nicely:
                    $$\frac{a_{n+1}}{a_n}=\frac{(n+1)!}{(n+1)^{n+1}}\cdot\frac{n^n}{n!}=\left(
                    \frac{n}{n+1}\right)^n=\frac{1}{\left(1+\frac{1}{n}\right)^n}\to\frac{1}{e}<1.$$
                    So the series converges by the ratio test.
                    """,
                    r"""
                    A comparison avoids limits altogether. Writing out the product,
                    $$\frac{n!}{n^n}=\frac{1}{n}\cdot\frac{2}{n}\cdots\frac{n}{n}\leq\frac{1}{n}
                    \cdot\frac{2}{n}=\frac{2}{n^2}$$
                    for $n\geq 2$, because every other factor is at most $1$. Since
                    $\sum\frac{2}{n^2}$ converges, so does your series.
                    """,
                    r"""
                    Stirling's formula $n!\sim\sqrt{2\pi n}\left(\frac{n}{e}\right)^n$ gives
                    $\frac{n!}{n^n}\sim\sqrt{2\pi n}\,e^{-n}$, so the terms decay exponentially.
                    The root test says the same: $\sqrt[n]{a_n}\to\frac{1}{e}$.
                    """,
                ],
            ),
            (
                "ser-3",
                r"How can rearranging $\sum\frac{(-1)^{n+1}}{n}$ change its sum?",
                ["conditional-convergence"],
                r"""
                I read that $\sum_{n=1}^\infty\frac{(-1)^{n+1}}{n}=\ln 2$, but that rearranging the
                terms can give a different sum. How can the value of a convergent series depend
                on the order of its terms?
                """,
                [
                    r"""
                    The series converges only conditionally: it converges by the Leibniz test
                    (the terms alternate and decrease to $0$), but
                    $\sum\left|\frac{(-1)^{n+1}}{n}\right|=\sum\frac{1}{n}$ diverges. The Riemann
                    rearrangement theorem says that such a series can be rearranged to converge
                    to any real number, or to diverge. For absolutely convergent series every
                    rearrangement has the same sum.
                    """,
                    r"""
                    Here is an explicit example. Take one positive term followed by two negative
                    ones: $1-\frac{1}{2}-\frac{1}{4}+\frac{1}{3}-\frac{1}{6}-\frac{1}{8}+\cdots$.
                    Grouping,
                    $$\left(\frac{1}{2k-1}-\frac{1}{4k-2}\right)-\frac{1}{4k}=\frac{1}{4k-2}-
                    \frac{1}{4k},$$
                    which is half of the $k$-th pair of the original series. So the rearranged
                    sum is $\frac{1}{2}\ln 2$.
                    """,
                    r"""
                    As for why the sum is $\ln 2$: for $|x|<1$ we have
                    $\ln(1+x)=\sum_{n=1}^\infty\frac{(-1)^{n+1}x^n}{n}$, and Abel's theorem allows
                    you to put $x=1$ because the series still converges there.
                    """,
                ],
            ),
            (
                "ser-4",
                r"Does $\sum_{n=2}^\infty\frac{1}{n\ln n}$ converge?",
                ["logarithms"],
                r"""
                Comparison with $\frac{1}{n}$ and with $\frac{1}{n^2}$ both fail to decide this
                one: the terms are smaller than the first and larger than the second. Any hint?
                """,
                [
                    r"""
                    Use the integral test. The function $\frac{1}{x\ln x}$ is positive and
                    decreasing on $[2,\infty)$, and
                    $$\int_2^\infty\frac{dx}{x\ln x}=\lim_{N\to\infty}\left[\ln\ln
                    x\right]_2^N=\infty,$$
                    so $\sum_{n=2}^\infty\frac{1}{n\ln n}$ diverges, very slowly. In contrast
                    $\sum_{n=2}^\infty\frac{1}{n(\ln n)^2}$ converges because
                    $\int_2^\infty\frac{dx}{x(\ln x)^2}=\frac{1}{\ln 2}$.
                    """,
                    r"""
                    Cauchy condensation also works: the condensed terms are
                    $$2^ka_{2^k}=\frac{2^k}{2^k\ln 2^k}=\frac{1}{k\ln 2},$$
                    a multiple of the harmonic series, so the series diverges. Logarithmic
                    factors sit just below the threshold between divergence and convergence.
                    """,
                ],
            ),
        ],
    ),
    (
        "taylor",
        ["calculus", "taylor-expansion"],
        [
            (
                "tay-1",
                r"Taylor series of $e^x$ and why it converges for every $x$",
                ["power-series", "exponential-function"],
                r"""
                How do I derive the Maclaurin series of $e^x$, and why does it converge for all
                $x\in\mathbb{R}$ and not just near $0$?
                """,
                [
                    r"""
                    Every derivative of $e^x$ is $e^x$, so $f^{(n)}(0)=1$ for all $n$ and
                    $$e^x=\sum_{n=0}^\infty\frac{x^n}{n!}=1+x+\frac{x^2}{2}+\frac{x^3}{6}+\cdots$$
                    By the ratio test,
                    $\left|\frac{x^{n+1}/(n+1)!}{x^n/n!}\right|=\frac{|x|}{n+1}\to 0$,
                    so the radius of convergence is infinite.
                    """,
                    r"""
                    An infinite radius of convergence alone does not show that the series equals
                    $e^x$; you also need the remainder to go to zero. The Lagrange form gives
                    $R_n(x)=\frac{e^{\xi}x^{n+1}}{(n+1)!}$ with $\xi$ between $0$ and $x$, so
                    $|R_n(x)|\leq\frac{e^{|x|}|x|^{n+1}}{(n+1)!}\to 0$.

                    This step matters: $e^{-1/x^2}$ (extended by $0$ at $x=0$) has all derivatives
                    equal to $0$ at the origin, yet it is not the zero function.
                    """,
                    r"""
                    In practice the series is excellent for computation:
                    $e\approx\sum_{n=0}^{10}\frac{1}{n!}=2.7182818\ldots$, and the remainder
                    estimate bounds the error by $\frac{3}{11!}<10^{-7}$.
                    """,
                ],
            ),
            (
                "tay-2",
                r"Error bound when approximating $\sin(0.1)$ by $x-\frac{x^3}{6}$",
                ["approximation"],
                r"""
                I used $\sin x\approx x-\frac{x^3}{6}$ to approximate $\sin(0.1)$. How accurate is
                this approximation, and how do I prove an error bound?
                """,
                [
                    r"""
                    You get $0.1-\frac{0.001}{6}=0.0998333\ldots$. The series of $\sin$ is
                    alternating with decreasing terms for $|x|<1$, so the error is at most the
                    first omitted term: $\frac{(0.1)^5}{120}\approx 8.3\times 10^{-8}$.
                    """,
                    r"""
                    With Lagrange's remainder there is a small trick: since the coefficient of
                    $x^4$ is zero, $x-\frac{x^3}{6}$ is also the Taylor polynomial of degree $4$.
                    So $$R_4(x)=\frac{\cos\xi}{120}x^5,\qquad|R_4(0.1)|\leq\frac{10^{-5}}{120},$$
                    which is sharper than the bound from the degree $3$ remainder.
                    """,
                ],
            ),
            (
                "tay-3",
                r"Series for $\ln(1+x)$ and computing $\ln 2$ efficiently",
                ["power-series", "logarithms"],
                r"""
                How is the series for $\ln(1+x)$ derived, and is it a practical way to compute
                $\ln 2$?
                """,
                [
                    r"""
                    Integrate the geometric series $\frac{1}{1+t}=\sum_{n=0}^\infty(-1)^nt^n$,
                    valid for $|t|<1$, from $0$ to $x$:
                    $$\ln(1+x)=\sum_{n=1}^\infty\frac{(-1)^{n+1}x^n}{n}=x-\frac{x^2}{2}+
                    \frac{x^3}{3}-\cdots$$
                    The expansion holds for $-1<x\leq 1$; at the left endpoint −1 it becomes
                    the negative of the harmonic series and diverges.
                    """,
                    r"""
                    At $x=1$ the series converges painfully slowly: after $N$ terms the error is
                    about $\frac{1}{2N}$. A much better series is
                    $$\ln\frac{1+x}{1-x}=2\sum_{k=0}^\infty\frac{x^{2k+1}}{2k+1}.$$
                    With $x=\frac{1}{3}$ this gives
                    $\ln 2=2\left(\frac{1}{3}+\frac{1}{81}+\frac{1}{1215}+\cdots\right)$, and four
                    terms already give $0.69313$.
                    """,
                    r"""
                    For limits you usually only need the first terms in little-o form:
                    $\ln(1+x)=x-\frac{x^2}{2}+o(x^2)$. For example
                    $\lim_{x\to 0}\frac{x-\ln(1+x)}{x^2}=\frac{1}{2}$ follows at once.
                    """,
                ],
            ),
            (
                "tay-4",
                r"Computing $\lim_{x\to 0}\frac{\sin x-x}{x^3}$ with Taylor series",
                ["limits"],
                r"""
                Applying L'Hôpital's rule three times to $\lim_{x\to 0}\frac{\sin x-x}{x^3}$ is
                messy. Is there a faster way?
                """,
                [
                    r"""
                    Expand the numerator: $\sin x=x-\frac{x^3}{6}+\frac{x^5}{120}-\cdots$, hence
                    $$\frac{\sin x-x}{x^3}=-\frac{1}{6}+\frac{x^2}{120}-\cdots\to-\frac{1}{6}.$$
                    """,
                    r"""
                    The same technique handles a whole family of limits:
                    $\lim_{x\to 0}\frac{e^x-1-x}{x^2}=\frac{1}{2}$, and using
                    $\tan x=x+\frac{x^3}{3}+O(x^5)$ you get
                    $\lim_{x\to 0}\frac{\tan x-x}{x^3}=\frac{1}{3}$. Expand the numerator until
                    the first term that does not cancel.
                    """,
                    r"""
                    A warning: you must expand far enough. Writing only $\sin x=x+O(x^3)$ leaves
                    $\frac{O(x^3)}{x^3}$, which says nothing. Keep the error term explicit,
                    $\sin x=x-\frac{x^3}{6}+O(x^5)$, and the answer is forced.
                    """,
                    r"""
                    For comparison, L'Hôpital's rule three times gives
                    $$\frac{\cos x-1}{3x^2}\to\frac{-\sin x}{6x}\to\frac{-\cos
                    x}{6}\to-\frac{1}{6}.$$
                    It works, but the series argument shows at a glance where the $-\frac{1}{6}$
                    comes from.
                    """,
                ],
            ),
        ],
    ),
    (
        "eigenvalues",
        ["linear-algebra", "eigenvalues-eigenvectors"],
        [
            (
                "eig-1",
                r"Eigenvalues and eigenvectors of $\begin{pmatrix}2&1\\1&2\end{pmatrix}$",
                ["matrices"],
                r"""
                How do I find the eigenvalues and eigenvectors of
                $$A=\begin{pmatrix}2&1\\1&2\end{pmatrix}?$$
                I know that I need to solve $\det(A-\lambda I)=0$, but I get lost afterwards.
                """,
                [
                    r"""
                    The characteristic polynomial is
                    $\det(A-\lambda I)=(2-\lambda)^2-1=\lambda^2-4\lambda+3=(\lambda-1)(\lambda-3)$,
                    so the eigenvalues are $\lambda_1=1$ and $\lambda_2=3$.

                    For $\lambda=3$, $(A-3I)v=0$ reads $-v_1+v_2=0$, so $v=(1,1)^T$. For
                    $\lambda=1$ you get $v_1+v_2=0$ and $v=(1,-1)^T$.
                    """,
                    r"""
                    For $2\times 2$ matrices there is a shortcut: the trace is
                    $\lambda_1+\lambda_2=4$ and the determinant is $\lambda_1\lambda_2=3$, so the
                    eigenvalues are the roots of $\lambda^2-4\lambda+3$. Because $A$ is
                    symmetric, the eigenvectors are orthogonal: $(1,1)\cdot(1,-1)=0$.
                    """,
                    r"""
                    Write $A=I+J$ with $J=\begin{pmatrix}1&1\\1&1\end{pmatrix}$. The matrix $J$
                    has rank $1$ and trace $2$, so its eigenvalues are $0$ and $2$. Adding $I$
                    shifts every eigenvalue by $1$, giving $1$ and $3$. In general $A+cI$ has
                    eigenvalues $\lambda+c$ with the same eigenvectors.
                    """,
                    r"""
                    Once you have the eigenvectors you can diagonalize: $A=PDP^{-1}$ with
                    $P=\begin{pmatrix}1&1\\1&-1\end{pmatrix}$ and $D=\operatorname{diag}(3,1)$.
                    This makes powers easy:
                    $$A^n=\frac{1}{2}\begin{pmatrix}3^n+1&3^n-1\\3^n-1&3^n+1\end{pmatrix}.$$
                    """,
                ],
            ),
            (
                "eig-2",
                r"Why are the eigenvalues of a triangular matrix its diagonal entries?",
                ["matrices"],
                r"""
                Let $T$ be an upper triangular $n\times n$ matrix. Why are its eigenvalues exactly
                the diagonal entries $t_{11},\dots,t_{nn}$?
                """,
                [
                    r"""
                    The matrix $T-\lambda I$ is again upper triangular with diagonal entries
                    $t_{ii}-\lambda$, and the determinant of a triangular matrix is the product of
                    its diagonal. Hence
                    $$\det(T-\lambda I)=\prod_{i=1}^n(t_{ii}-\lambda),$$
                    whose zeros are exactly the $t_{ii}$, counted with multiplicity.
                    """,
                    r"""
                    One caution: the diagonal tells you the algebraic multiplicities, not the
                    eigenvectors. The matrix $\begin{pmatrix}1&1\\0&1\end{pmatrix}$ has the
                    eigenvalue $1$ twice, but only one independent eigenvector $(1,0)^T$, so it
                    is not diagonalizable.
                    """,
                    r"""
                    This is why the Schur decomposition is so useful: every complex square matrix
                    can be written as $A=QTQ^*$ with $Q$ unitary and $T$ upper triangular. The
                    eigenvalues of $A$ can then be read off the diagonal of $T$, and this is what
                    the QR algorithm computes in practice.
                    """,
                ],
            ),
            (
                "eig-3",
                r"If $\lambda$ is an eigenvalue of $A$, is $\lambda^2$ an eigenvalue of $A^2$?",
                ["matrices"],
                r"""
                Suppose $Av=\lambda v$ with $v\neq 0$. Is $\lambda^2$ then an eigenvalue of
                $A^2$? And what can be said about powers $A^k$ in general?
                """,
                [
                    r"""
                    Yes, with the same eigenvector: $A^2v=A(\lambda v)=\lambda Av=\lambda^2v$.
                    By induction $A^kv=\lambda^kv$, and for any polynomial $p$ you get
                    $p(A)v=p(\lambda)v$.

                    If $A$ is invertible then $\lambda\neq 0$ (otherwise $Av=0$ with $v\neq 0$),
                    and multiplying $Av=\lambda v$ by $\frac{1}{\lambda}A^{-1}$ gives
                    $A^{-1}v=\frac{1}{\lambda}v$. So negative powers behave the same way.
                    """,
                    r"""
                    The converse statement about eigenvectors fails. Take
                    $A=\begin{pmatrix}1&0\\0&-1\end{pmatrix}$. Then $A^2=I$, so every nonzero
                    vector is an eigenvector of $A^2$, but $(1,1)^T$ is not an eigenvector of
                    $A$.
                    """,
                    r"""
                    Over $\mathbb{C}$ the full answer is the spectral mapping theorem: the
                    eigenvalues of $p(A)$ are exactly $p(\lambda_1),\dots,p(\lambda_n)$, counted
                    with multiplicity. It follows by triangularizing $A$. A typical consequence is
                    $\operatorname{tr}(A^2)=\sum_i\lambda_i^2$.
                    """,
                ],
            ),
            (
                "eig-4",
                r"Real symmetric matrices have real eigenvalues",
                ["symmetric-matrices"],
                r"""
                Let $A\in\mathbb{R}^{n\times n}$ with $A=A^T$. How do I show that every eigenvalue
                of $A$ is real, even though a priori the eigenvector could be complex?
                """,
                [
                    r"""
                    Let $Av=\lambda v$ with $v\in\mathbb{C}^n$, $v\neq 0$. Then
                    $\bar v^TAv=\lambda\bar v^Tv=\lambda\|v\|^2$. Conjugating and using that $A$
                    is real and symmetric,
                    $$\bar\lambda\|v\|^2=\overline{\bar v^TAv}=v^TA\bar v=\left(v^TA\bar
                    v\right)^T=\bar v^TA^Tv=\bar v^TAv=\lambda\|v\|^2.$$
                    Since $\|v\|^2>0$, $\lambda=\bar\lambda$ is real.
                    """,
                    r"""
                    This is the first step of the spectral theorem: a real symmetric matrix can
                    be written as $A=Q\Lambda Q^T$ with $Q$ orthogonal and $\Lambda$ real
                    diagonal. A useful corollary is that the Rayleigh quotient
                    $R(x)=\frac{x^TAx}{x^Tx}$ attains its maximum $\lambda_{\max}$ at a
                    corresponding eigenvector.
                    """,
                    r"""
                    The same argument shows that Hermitian matrices ($A=A^*$) have real
                    eigenvalues. This is why observables in quantum mechanics are modelled by
                    Hermitian operators: in the Schrödinger equation
                    $i\hbar\frac{\partial\psi}{\partial t}=H\psi$ the Hamiltonian $H$ is
                    Hermitian, so its possible energy values are real.
                    """,
                ],
            ),
        ],
    ),
    (
        "determinants",
        ["linear-algebra", "determinant"],
        [
            (
                "det-1",
                r"Why is $\det(AB)=\det(A)\det(B)$?",
                ["matrices"],
                r"""
                The product rule $\det(AB)=\det(A)\det(B)$ looks like magic to me. Is there an
                intuitive reason, or a short proof?
                """,
                [
                    r"""
                    Geometrically, $|\det A|$ is the factor by which $A$ scales volumes, and the
                    sign records whether orientation is preserved. Applying $B$ and then $A$
                    scales volumes first by $|\det B|$ and then by $|\det A|$, and the
                    orientation signs multiply as well.
                    """,
                    r"""
                    Algebraically: if $A$ is singular then so is $AB$, and both sides are $0$.
                    Otherwise $A=E_1\cdots E_k$ is a product of elementary matrices, and for each
                    elementary $E$ we have $\det(EM)=\det(E)\det(M)$: a row swap multiplies by
                    $-1$, scaling a row by $c$ multiplies by $c$, and adding a multiple of a row
                    changes nothing. Induction on $k$ finishes the proof.
                    """,
                    r"""
                    Some consequences: $\det(A^{-1})=\frac{1}{\det A}$ and
                    $\det(P^{-1}AP)=\det A$, so the determinant is a similarity invariant and
                    equals the product of the eigenvalues. Note that there is no sum rule:
                    $\det(A+B)\neq\det A+\det B$ in general, e.g. $\det(I+I)=2^n$ for
                    $n\times n$ matrices.
                    """,
                ],
            ),
            (
                "det-2",
                r"Determinant of a $3\times 3$ matrix by cofactor expansion",
                ["matrices"],
                r"""
                I need $\det\begin{pmatrix}1&2&3\\4&5&6\\7&8&10\end{pmatrix}$ and keep getting
                different answers. What is a reliable procedure?
                """,
                [
                    r"""
                    Expand along the first row, with the checkerboard signs $(-1)^{i+j}$:
                    $$1\cdot(50-48)-2\cdot(40-42)+3\cdot(32-35)=2+4-9=-3.$$
                    The most common mistake is forgetting the minus sign in front of the middle
                    cofactor.
                    """,
                    r"""
                    Row reduction is less error prone for bigger matrices. Subtracting $4R_1$
                    from $R_2$ and $7R_1$ from $R_3$ gives
                    $\begin{pmatrix}1&2&3\\0&-3&-6\\0&-6&-11\end{pmatrix}$, and then
                    $R_3-2R_2$ makes the last row $(0,0,1)$. The determinant is the product of
                    the diagonal, $1\cdot(-3)\cdot 1=-3$.
                    """,
                    r"""
                    For $3\times 3$ matrices only, the rule of Sarrus gives
                    $1\cdot5\cdot10+2\cdot6\cdot7+3\cdot4\cdot8-3\cdot5\cdot7-1\cdot6\cdot8-2\cdot4
                    \cdot10=-3.$
                    Amusingly, with $9$ instead of $10$ in the corner the determinant would be
                    $0$, since then the rows form an arithmetic progression.
                    """,
                ],
            ),
            (
                "det-3",
                r"Proof of the Vandermonde determinant formula",
                ["polynomials"],
                r"""
                How do I prove
                $$\det\begin{pmatrix}1&x_1&x_1^2\\1&x_2&x_2^2\\1&x_3&x_3^2
                \end{pmatrix}=(x_2-x_1)(x_3-x_1)(x_3-x_2),$$
                and what is the general $n\times n$ version?
                """,
                [
                    r"""
                    Regard the determinant as a polynomial in $x_3$ of degree at most $2$. It
                    vanishes at $x_3=x_1$ and at $x_3=x_2$ (two equal rows), so it equals
                    $c(x_3-x_1)(x_3-x_2)$. The leading coefficient $c$ is the cofactor of
                    $x_3^2$, namely $\det\begin{pmatrix}1&x_1\\1&x_2\end{pmatrix}=x_2-x_1$. In
                    general $$\det V=\prod_{1\leq i<j\leq n}(x_j-x_i).$$
                    """,
                    r"""
                    The formula has an important consequence: if the $x_i$ are distinct, then $V$
                    is invertible, so there is exactly one polynomial of degree less than $n$
                    through $n$ points $(x_i,y_i)$. That is the uniqueness part of Lagrange
                    interpolation.
                    """,
                    r"""
                    A proof by column operations: replace $C_3$ by $C_3-x_1C_2$ and then $C_2$ by
                    $C_2-x_1C_1$. Row $i$ becomes $\left(1,\;x_i-x_1,\;x_i(x_i-x_1)\right)$ and the
                    first row becomes $(1,0,0)$. Expanding along the first row and factoring
                    $x_i-x_1$ out of the remaining rows leaves a $2\times 2$ Vandermonde
                    determinant in $x_2,x_3$, and induction does the rest.
                    """,
                ],
            ),
            (
                "det-4",
                r"Why is $\det A=0$ exactly when the columns are linearly dependent?",
                ["matrices"],
                r"""
                I understand that a matrix with two equal columns has determinant $0$. Why does
                every linear dependence among the columns force $\det A=0$, and why does the
                converse hold?
                """,
                [
                    r"""
                    If the columns are dependent, some column is a combination of the others.
                    Subtracting that combination, which does not change the determinant, produces
                    a zero column, and a multilinear function vanishes there. Conversely, if the
                    columns are independent then $A$ is invertible and
                    $\det A\cdot\det A^{-1}=\det I=1$, so $\det A\neq 0$.
                    """,
                    r"""
                    So $\det A\neq 0\iff\operatorname{rank}A=n\iff Ax=0$ has only the trivial
                    solution, iff $0$ is not an eigenvalue. Numerically, however, a small
                    determinant is a poor measure of near-singularity: $\det(0.1I_{20})=10^{-20}$
                    although this matrix is perfectly conditioned. The condition number
                    $\kappa(A)=\|A\|\|A^{-1}\|$ is the right measure.
                    """,
                    r"""
                    A small example: in $\begin{pmatrix}1&2\\2&4\end{pmatrix}$ the second row is
                    twice the first, the determinant is $4-4=0$, and the null space is spanned by
                    $(2,-1)^T$.
                    """,
                ],
            ),
        ],
    ),
    (
        "matrix-norms",
        ["linear-algebra", "matrices", "normed-spaces"],
        [
            (
                "norm-1",
                r"Why is $\|A\|_2$ the largest singular value of $A$?",
                ["singular-values"],
                r"""
                The operator norm is defined as $\|A\|_2=\max_{\|x\|_2=1}\|Ax\|_2$. Why is it
                equal to $\sqrt{\lambda_{\max}(A^TA)}$, the largest singular value?
                """,
                [
                    r"""
                    Note that $\|Ax\|_2^2=x^TA^TAx$. The matrix $A^TA$ is symmetric positive
                    semidefinite, so it has an orthonormal eigenbasis $v_1,\dots,v_n$ with
                    eigenvalues $\mu_1\geq\dots\geq\mu_n\geq 0$. For a unit vector
                    $x=\sum c_iv_i$ we get $x^TA^TAx=\sum\mu_ic_i^2\leq\mu_1$, with equality
                    at $x=v_1$. Hence $\|A\|_2=\sqrt{\mu_1}=\sigma_1$.
                    """,
                    r"""
                    With the singular value decomposition $A=U\Sigma V^T$ this is immediate:
                    orthogonal matrices preserve the Euclidean norm, so
                    $\|A\|_2=\|\Sigma\|_2=\sigma_1$.
                    For symmetric matrices $\|A\|_2=\max_i|\lambda_i|$, but not in general:
                    $\begin{pmatrix}0&1\\0&0\end{pmatrix}$ has only the eigenvalue $0$ and norm $1$.
                    """,
                    r"""
                    To compute it, run power iteration on $A^TA$:
                    $$x_{k+1}=\frac{A^TAx_k}{\|A^TAx_k\|_2}.$$
                    If $\sigma_1>\sigma_2$, the iterates converge to $v_1$ and
                    $\|Ax_k\|_2\to\|A\|_2$.
                    """,
                ],
            ),
            (
                "norm-2",
                r"Prove that $\|A\|_2\leq\|A\|_F$",
                ["inequality"],
                r"""
                The Frobenius norm is $\|A\|_F=\sqrt{\sum_{i,j}a_{ij}^2}$. How do I show that the
                spectral norm never exceeds it, and when are the two equal?
                """,
                [
                    r"""
                    In terms of singular values,
                    $$\|A\|_F^2=\operatorname{tr}(A^TA)=\sum_i\sigma_i^2\geq\sigma_1^2=\|A\|_2^2.$$
                    So $\|A\|_2\leq\|A\|_F$, with equality iff there is only one nonzero singular
                    value, that is iff $A$ has rank at most $1$, $A=uv^T$.
                    """,
                    r"""
                    A direct proof with Cauchy–Schwarz: $(Ax)_i=\sum_ja_{ij}x_j$, so
                    $|(Ax)_i|^2\leq\left(\sum_ja_{ij}^2\right)\|x\|_2^2$. Summing over $i$ gives
                    $\|Ax\|_2^2\leq\|A\|_F^2\|x\|_2^2$, which is the claim. In the other
                    direction one has $\|A\|_F\leq\sqrt{r}\|A\|_2$ with $r=\operatorname{rank}A$.
                    """,
                    r"""
                    The identity matrix shows the gap can be large: $\|I_n\|_2=1$ but
                    $\|I_n\|_F=\sqrt{n}$. This also proves that the Frobenius norm is not induced
                    by any vector norm when $n\geq 2$, because every induced norm gives $\|I\|=1$.
                    """,
                ],
            ),
            (
                "norm-3",
                r"The matrix $1$-norm is the maximum absolute column sum",
                ["inequality"],
                r"""
                Show that $\|A\|_1=\max_{\|x\|_1=1}\|Ax\|_1$ equals
                $\max_j\sum_i|a_{ij}|$. I can prove one inequality but not the other.
                """,
                [
                    r"""
                    For the upper bound,
                    $$\|Ax\|_1=\sum_i\left|\sum_ja_{ij}x_j\right|\leq\sum_j|x_j|\sum_i|a_{ij}|\leq
                    \left(\max_j\sum_i|a_{ij}|\right)\|x\|_1.$$
                    For equality take $x=e_k$, where $k$ is the column with the largest absolute
                    sum; then $\|Ae_k\|_1$ is exactly that column sum.
                    """,
                    r"""
                    Dually, $\|A\|_\infty=\max_i\sum_j|a_{ij}|$ is the maximum absolute row sum,
                    attained at the vector with entries $\operatorname{sign}(a_{kj})$ for the
                    worst row $k$; in fact $\|A^T\|_1=\|A\|_\infty$. For
                    $A=\begin{pmatrix}1&-2\\3&4\end{pmatrix}$ we get $\|A\|_1=6$ and
                    $\|A\|_\infty=7$.
                    """,
                    r"""
                    All induced norms are submultiplicative, which follows straight from the
                    definition: $\|ABx\|\leq\|A\|\|Bx\|\leq\|A\|\|B\|\|x\|$. In particular
                    $\|AB\|_1\leq\|A\|_1\|B\|_1$, a fact used constantly in error analysis.
                    """,
                ],
            ),
            (
                "norm-4",
                r"Spectral radius versus matrix norms: is $\rho(A)\leq\|A\|$ always?",
                ["spectral-radius"],
                r"""
                Why is the spectral radius $\rho(A)=\max_i|\lambda_i|$ bounded by every induced
                matrix norm, and how far apart can the two be?
                """,
                [
                    r"""
                    If $Av=\lambda v$ with $v\neq 0$, then
                    $|\lambda|\|v\|=\|Av\|\leq\|A\|\|v\|$, so $|\lambda|\leq\|A\|$ for every
                    eigenvalue. (For a real matrix with a complex eigenvalue, use the induced norm
                    on $\mathbb{C}^n$.)
                    """,
                    r"""
                    Gelfand's formula makes this sharp asymptotically:
                    $\rho(A)=\lim_{k\to\infty}\|A^k\|^{1/k}$ for any norm. As a consequence
                    $A^k\to 0$ iff $\rho(A)<1$, which is exactly what governs the convergence of
                    iterative methods such as the Jacobi iteration
                    $x_{k+1}=D^{-1}\left(b-(L+U)x_k\right)$.
                    """,
                    r"""
                    For a single power the gap can be huge:
                    $A=\begin{pmatrix}0&100\\0&0\end{pmatrix}$ has $\rho(A)=0$ but
                    $\|A\|_2=100$. For normal matrices ($AA^*=A^*A$), however,
                    $\|A\|_2=\rho(A)$.
                    """,
                ],
            ),
        ],
    ),
    (
        "primes",
        ["elementary-number-theory", "prime-numbers"],
        [
            (
                "prime-1",
                r"Is $p_1p_2\cdots p_n+1$ always prime in Euclid's proof?",
                ["proof-explanation"],
                r"""
                In Euclid's proof that there are infinitely many primes we multiply all primes
                in a finite list and add $1$. Is the number $p_1p_2\cdots p_n+1$ itself always
                prime?
                """,
                [
                    r"""
                    No, and the proof does not need it. The number $N=p_1\cdots p_n+1$ leaves
                    remainder $1$ when divided by each $p_i$, so any prime factor of $N$ is missing
                    from the list. A counterexample to primality is
                    $$2\cdot3\cdot5\cdot7\cdot11\cdot13+1=30031=59\cdot509.$$
                    """,
                    r"""
                    There are many other proofs. Euler showed that $\sum_p\frac{1}{p}$ diverges,
                    which is much stronger. Another neat one uses the Fermat numbers
                    $F_n=2^{2^n}+1$: they are pairwise coprime because
                    $F_0F_1\cdots F_{n-1}=F_n-2$, so each $F_n$ contributes a new prime factor.
                    """,
                    r"""
                    Saidak's proof is even shorter: $n$ and $n+1$ are coprime, so $n(n+1)$ has at
                    least two distinct prime factors; then $n(n+1)$ and $n(n+1)+1$ are coprime,
                    so their product has at least three, and so on without end.
                    """,
                ],
            ),
            (
                "prime-2",
                r"Why is it enough to test divisors up to $\sqrt{n}$?",
                ["algorithms"],
                r"""
                To check whether $n$ is prime we only try divisors $d\leq\sqrt{n}$. Why can we stop
                there?
                """,
                [
                    r"""
                    If $n=ab$ with $1<a\leq b<n$, then $a^2\leq ab=n$, so $a\leq\sqrt{n}$. Hence
                    every composite $n$ has a divisor in $[2,\sqrt{n}]$, and the smallest such
                    divisor is automatically prime. For $n=221$ you only test primes up to $14$,
                    and indeed $221=13\cdot 17$.
                    """,
                    r"""
                    The sieve of Eratosthenes uses the same fact:

                    <ol><li>it is enough to cross out multiples of primes
                    $p\leq\sqrt{N}$;</li><li>for each such $p$ you can start crossing out at
                    $p^2$.</li></ol>

                    In code that is a loop like <code>for p in range(2, isqrt(N) + 1)</code>, and
                    the whole sieve runs in $O(N\log\log N)$ time.
                    """,
                    r"""
                    The bound is sharp for squares of primes: $n=169=13^2$ has smallest prime
                    factor exactly $\sqrt{n}$. A related fact: if no prime $p\leq\sqrt[3]{n}$
                    divides $n$, then $n$ is a product of at most two primes.
                    """,
                ],
            ),
            (
                "prime-3",
                r"What does $\pi(x)\sim\frac{x}{\ln x}$ mean?",
                ["analytic-number-theory"],
                r"""
                The prime number theorem is often stated as $\pi(x)\sim\frac{x}{\ln x}$. Does this
                mean that the difference $\pi(x)-\frac{x}{\ln x}$ tends to zero?
                """,
                [
                    r"""
                    No, it is a statement about the ratio:
                    $$\lim_{x\to\infty}\frac{\pi(x)}{x/\ln x}=1.$$
                    The difference actually grows. For example $\pi(10^6)=78498$ while
                    $\frac{10^6}{\ln 10^6}\approx 72382$. The logarithmic integral
                    $\operatorname{li}(x)=\int_0^x\frac{dt}{\ln t}$ is a much better
                    approximation: $\operatorname{li}(10^6)\approx 78628$.
                    """,
                    r"""
                    Heuristically, a random integer near $x$ is prime with probability about
                    $\frac{1}{\ln x}$. An equivalent form of the theorem is that the $n$-th prime
                    satisfies $p_n\sim n\ln n$. The first proofs, by Hadamard and de la Vallée
                    Poussin in 1896, rest on the fact that $\zeta(s)$ has no zeros on the line
                    $\operatorname{Re}(s)=1$.
                    """,
                    r"""
                    Long before that, Chebyshev proved with elementary methods that
                    $0.92\frac{x}{\ln x}<\pi(x)<1.11\frac{x}{\ln x}$ for all sufficiently large
                    $x$. His methods also give Bertrand's postulate: there is always a prime
                    between $n$ and $2n$ for $n\geq 2$.
                    """,
                ],
            ),
            (
                "prime-4",
                r"Is $n^2+n+41$ prime for every $n$?",
                ["polynomials"],
                r"""
                I evaluated $n^2+n+41$ for $n=0,1,\dots,10$ and always got a prime. Does this
                continue forever?
                """,
                [
                    r"""
                    It is prime for $n=0,1,\dots,39$, but $n=40$ gives
                    $$40^2+40+41=1681=41^2.$$
                    And $n=41$ obviously fails too: $41^2+41+41=41\cdot 43$.
                    """,
                    r"""
                    No nonconstant polynomial $f$ with integer coefficients takes only prime
                    values. If $f(1)=p$ is prime, then $f(1+kp)\equiv f(1)\equiv 0\pmod p$ for all
                    $k$, and $f(1+kp)=\pm p$ can only happen for finitely many $k$, so some value
                    is a proper multiple of $p$.
                    """,
                    r"""
                    Euler's polynomial is remarkable for a deeper reason: its discriminant is
                    $1-4\cdot 41=-163$, and $\mathbb{Q}(\sqrt{-163})$ has class number $1$ (it is
                    the largest Heegner number). That is why the first $40$ values are all prime.
                    """,
                ],
            ),
        ],
    ),
    (
        "modular-arithmetic",
        ["elementary-number-theory", "modular-arithmetic"],
        [
            (
                "mod-1",
                r"Remainder of $3^{100}$ when divided by $7$",
                ["exponentiation"],
                r"""
                Without a calculator, how do I find the remainder when $3^{100}$ is divided by
                $7$?
                """,
                [
                    r"""
                    Use Fermat's little theorem: since $7$ is prime and $7\nmid 3$,
                    $3^6\equiv 1\pmod 7$. Writing $100=6\cdot 16+4$,
                    $$3^{100}=\left(3^6\right)^{16}\cdot 3^4\equiv 3^4=81\equiv 4\pmod 7.$$
                    """,
                    r"""
                    Repeated squaring works for any modulus: $3^2\equiv 2$, $3^4\equiv 4$,
                    $3^8\equiv 2$, $3^{16}\equiv 4$, $3^{32}\equiv 2$, $3^{64}\equiv 4$ modulo $7$.
                    Since $100=64+32+4$,
                    $$3^{100}\equiv 4\cdot 2\cdot 4=32\equiv 4\pmod 7.$$
                    """,
                    r"""
                    You can check with Python: <code>pow(3, 100, 7)</code> returns
                    <code>4</code>, so $3^{100}\equiv 4\pmod 7$. Here $3$ is a primitive root
                    modulo $7$ (its order is $6$), so Fermat's exponent cannot be improved.
                    """,
                    r"""
                    Another shortcut: $3^3=27\equiv-1\pmod 7$. Therefore
                    $3^{99}=(3^3)^{33}\equiv(-1)^{33}=-1$, and multiplying by $3$ gives
                    $3^{100}\equiv-3\equiv 4\pmod 7$.
                    """,
                ],
            ),
            (
                "mod-2",
                r"Solving $x\equiv 2\pmod 3$, $x\equiv 3\pmod 5$, $x\equiv 2\pmod 7$",
                ["chinese-remainder-theorem"],
                r"""
                Find all integers $x$ with $x\equiv 2\pmod 3$, $x\equiv 3\pmod 5$ and
                $x\equiv 2\pmod 7$. I know the Chinese remainder theorem applies but I do not see
                how to actually construct the solution.
                """,
                [
                    r"""
                    The moduli are pairwise coprime, so there is a unique solution modulo $105$.
                    Solve step by step: $x=2+3k$ and $2+3k\equiv 3\pmod 5$ give $3k\equiv 1$,
                    so $k\equiv 2\pmod 5$ and $x=8+15m$. Then $8+15m\equiv 2\pmod 7$ reduces to
                    $1+m\equiv 2$, so $m\equiv 1$ and $x=23$. All solutions are
                    $x\equiv 23\pmod{105}$.
                    """,
                    r"""
                    The explicit formula is $x=\sum_ia_iM_iy_i$ with $M_i=\frac{M}{m_i}$ and
                    $y_i\equiv M_i^{-1}\pmod{m_i}$. Here $M_1=35$, $y_1=2$; $M_2=21$, $y_2=1$;
                    $M_3=15$, $y_3=1$, so
                    $$x=2\cdot35\cdot2+3\cdot21\cdot1+2\cdot15\cdot1=233\equiv 23\pmod{105}.$$
                    """,
                    r"""
                    This is the classic problem from the Chinese text <em>Sunzi Suanjing</em>. For
                    small moduli a brute-force check is reassuring:
                    <code>[x for x in range(105) if x % 3 == 2 and x % 5 == 3 and x % 7 == 2]</code>
                    returns <code>[23]</code>.
                    """,
                ],
            ),
            (
                "mod-3",
                r"Proof of Fermat's little theorem $a^p\equiv a\pmod p$",
                ["proof-writing"],
                r"""
                I would like to understand a proof of Fermat's little theorem: for a prime $p$
                and any integer $a$, $a^p\equiv a\pmod p$.
                """,
                [
                    r"""
                    Suppose $p\nmid a$. Multiplication by $a$ permutes the nonzero residues
                    $\{1,2,\dots,p-1\}$ modulo $p$, so
                    $$\prod_{k=1}^{p-1}(ak)\equiv\prod_{k=1}^{p-1}k,\quad\text{i.e.}\quad
                    a^{p-1}(p-1)!\equiv(p-1)!\pmod p.$$
                    Since $(p-1)!$ is invertible modulo $p$, we get $a^{p-1}\equiv 1\pmod p$.
                    Multiply by $a$; if $p\mid a$ both sides are $0$.
                    """,
                    r"""
                    Induction on $a$ also works. By the binomial theorem
                    $$(a+1)^p=\sum_{k=0}^p\binom{p}{k}a^k\equiv a^p+1\pmod p,$$
                    because $p\mid\binom{p}{k}$ for $0<k<p$. So $a^p\equiv a$ implies
                    $(a+1)^p\equiv a+1$.
                    """,
                    r"""
                    In group-theoretic language: $(\mathbb{Z}/p\mathbb{Z})^\times$ is a group of
                    order $p-1$, so by Lagrange's theorem the order of $a$ divides $p-1$ and
                    $a^{p-1}\equiv 1\pmod p$. The same argument gives Euler's theorem
                    $a^{\varphi(n)}\equiv 1\pmod n$ for $\gcd(a,n)=1$.
                    """,
                    r"""
                    Be aware that the converse is false. The number $561=3\cdot11\cdot17$
                    satisfies $a^{561}\equiv a\pmod{561}$ for every $a$; it is the smallest
                    Carmichael number. This is why the Fermat test alone cannot certify primality.
                    """,
                ],
            ),
            (
                "mod-4",
                r"Last two digits of $7^{2023}$",
                ["exponentiation"],
                r"""
                How can I find the last two digits of $7^{2023}$, i.e. $7^{2023}\bmod 100$?
                """,
                [
                    r"""
                    Notice that $7^4=2401\equiv 1\pmod{100}$. Since $2023=4\cdot 505+3$,
                    $$7^{2023}\equiv 7^3=343\equiv 43\pmod{100}.$$
                    So the last two digits are $43$.
                    """,
                    r"""
                    The general method: $\varphi(100)=40$, so $7^{40}\equiv 1\pmod{100}$ by
                    Euler's theorem and you can reduce the exponent modulo $40$:
                    $2023\equiv 23\pmod{40}$. Then compute $7^{23}$ modulo $4$ and modulo $25$
                    and combine with the Chinese remainder theorem. Here the order of $7$ happens
                    to be only $4$, so the shortcut above is faster.
                    """,
                ],
            ),
        ],
    ),
]

SUBJECTS += [
    (
        "gcd-bezout",
        ["elementary-number-theory", "gcd-and-lcm"],
        [
            (
                "gcd-1",
                r"Find integers $x,y$ with $240x+46y=\gcd(240,46)$",
                ["euclidean-algorithm"],
                r"""
                I can compute $\gcd(240,46)$ with the Euclidean algorithm, but how do I find the
                coefficients $x$ and $y$ in $240x+46y=\gcd(240,46)$?
                """,
                [
                    r"""
                    Run the Euclidean algorithm and keep the quotients:
                    $$\begin{align*}
                    240&=5\cdot 46+10\\
                    46&=4\cdot 10+6\\
                    10&=1\cdot 6+4\\
                    6&=1\cdot 4+2\\
                    4&=2\cdot 2.
                    \end{align*}$$
                    So the gcd is $2$. Substituting back,
                    $2=6-4=2\cdot 6-10=2\cdot 46-9\cdot 10=47\cdot 46-9\cdot 240$, hence
                    $x=-9$ and $y=47$.
                    """,
                    r"""
                    Once you have one solution you have all of them:
                    $$x=-9+23t,\qquad y=47-120t,\qquad t\in\mathbb{Z},$$
                    because $\frac{46}{2}=23$ and $\frac{240}{2}=120$. For instance $t=1$ gives
                    $x=14$, $y=-73$, and indeed $240\cdot 14-46\cdot 73=3360-3358=2$.
                    """,
                    r"""
                    To avoid back-substitution, run the extended algorithm forwards. Keep triples
                    $(r_i,s_i,t_i)$ with $r_i=240s_i+46t_i$, starting from $(240,1,0)$ and
                    $(46,0,1)$, and update all three with the same rule
                    $r_{i+1}=r_{i-1}-q_ir_i$. When the remainder reaches $2$ the triple is
                    $(2,-9,47)$.
                    """,
                    r"""
                    A useful corollary: since the gcd is $2$, the equation $240x+46y=c$ has
                    integer solutions if and only if $2\mid c$. For example $240x+46y=5$ has none,
                    while $240x+46y=10$ has $x=-45$, $y=235$.
                    """,
                ],
            ),
            (
                "gcd-2",
                r"Why does Bézout's identity hold?",
                ["proof-explanation"],
                r"""
                Why can $\gcd(a,b)$ always be written as $ax+by$ with integers $x,y$? I would like
                a proof that does not just run the algorithm on an example.
                """,
                [
                    r"""
                    Let $S=\{ax+by>0:x,y\in\mathbb{Z}\}$; it is nonempty, so by well-ordering it
                    has a smallest element $d=ax_0+by_0$. Divide: $a=qd+r$ with $0\leq r<d$. Then
                    $r=a(1-qx_0)+b(-qy_0)$ is either $0$ or in $S$, and minimality forces $r=0$,
                    so $d\mid a$; similarly $d\mid b$. Every common divisor of $a$ and $b$ divides
                    $ax_0+by_0=d$, hence $d=\gcd(a,b)$.
                    """,
                    r"""
                    The identity has many corollaries. $\gcd(a,b)=1$ iff $ax+by=1$ is solvable,
                    so $a$ is invertible modulo $b$ exactly when they are coprime. It also gives
                    Euclid's lemma: if $p\mid ab$ and $p\nmid a$, then $1=px+ay$, so
                    $b=pbx+aby$ is divisible by $p$.
                    """,
                    r"""
                    Bézout's identity is special to principal ideal domains. In $\mathbb{Z}[x]$ the
                    elements $2$ and $x$ have gcd $1$, but $2f(x)+xg(x)$ always has an even
                    constant term, so it is never equal to $1$.
                    """,
                ],
            ),
            (
                "gcd-3",
                r"Why is $\gcd(a,b)\cdot\operatorname{lcm}(a,b)=ab$?",
                ["divisibility"],
                r"""
                Why is $\gcd(a,b)\cdot\operatorname{lcm}(a,b)=ab$ for positive integers, and does
                the same formula work for three numbers?
                """,
                [
                    r"""
                    Use prime factorizations $a=\prod p^{\alpha_p}$ and $b=\prod p^{\beta_p}$. The
                    gcd takes the exponent $\min(\alpha_p,\beta_p)$ and the lcm takes
                    $\max(\alpha_p,\beta_p)$, and
                    $\min(\alpha_p,\beta_p)+\max(\alpha_p,\beta_p)=\alpha_p+\beta_p$
                    for every prime.
                    """,
                    r"""
                    It does not extend naively: for $a=b=c=2$ the product of gcd and lcm is $4$,
                    not $abc=8$. The correct three-number version is
                    $$\operatorname{lcm}(a,b,c)=\frac{abc\,\gcd(a,b,c)}{\gcd(a,b)\gcd(b,c)
                    \gcd(c,a)}.$$
                    Check it on $4,6,10$: $\frac{240\cdot 2}{2\cdot 2\cdot 2}=60$.
                    """,
                    r"""
                    A proof without factorization: let $d=\gcd(a,b)$ and $m=\frac{ab}{d}$. Then
                    $m=a\cdot\frac{b}{d}$ is a common multiple. If $a\mid n$ and $b\mid n$, write
                    $d=ax+by$; then
                    $$\frac{n}{m}=\frac{nd}{ab}=\frac{n}{b}x+\frac{n}{a}y\in\mathbb{Z},$$
                    so $m$ divides every common multiple.
                    """,
                ],
            ),
            (
                "gcd-4",
                r"Consecutive Fibonacci numbers are coprime",
                ["fibonacci-numbers"],
                r"""
                Show that $\gcd(F_{n+1},F_n)=1$ for the Fibonacci numbers. I have also heard that
                Fibonacci numbers are the worst case for the Euclidean algorithm. Why?
                """,
                [
                    r"""
                    Apply one step of the Euclidean algorithm repeatedly:
                    $$\gcd(F_{n+1},F_n)=\gcd(F_n,F_{n+1}-F_n)=\gcd(F_n,F_{n-1})=\cdots=
                    \gcd(F_2,F_1)=1.$$
                    Every quotient in this run equals $1$, the slowest possible progress. Lamé's
                    theorem makes this precise: the number of steps is at most five times the
                    number of decimal digits of the smaller input.
                    """,
                    r"""
                    Much more is true: $\gcd(F_m,F_n)=F_{\gcd(m,n)}$. For example
                    $\gcd(F_{12},F_{18})=\gcd(144,2584)=8=F_6$.
                    """,
                    r"""
                    Cassini's identity $F_{n+1}F_{n-1}-F_n^2=(-1)^n$ is an explicit Bézout
                    relation: it writes $\pm 1$ as an integer combination of $F_{n+1}$ and $F_n$,
                    which proves coprimality in one line.
                    """,
                ],
            ),
        ],
    ),
    (
        "combinatorics",
        ["combinatorics", "binomial-coefficients"],
        [
            (
                "comb-1",
                r"Why is $\sum_{k=0}^n\binom{n}{k}=2^n$?",
                ["summation"],
                r"""
                I noticed that every row of Pascal's triangle adds up to a power of two. Why is
                $\sum_{k=0}^n\binom{n}{k}=2^n$?
                """,
                [
                    r"""
                    Put $x=y=1$ in the binomial theorem:
                    $$2^n=(1+1)^n=\sum_{k=0}^n\binom{n}{k}1^k1^{n-k}=\sum_{k=0}^n\binom{n}{k}.$$
                    """,
                    r"""
                    Count subsets of $\{1,\dots,n\}$ in two ways. There are $\binom{n}{k}$ subsets
                    with $k$ elements, and each element is either in or out, which gives $2^n$
                    subsets in total. The alternating version $\sum_{k=0}^n(-1)^k\binom{n}{k}=0$
                    for $n\geq 1$ says there are as many even-sized subsets as odd-sized ones.
                    """,
                    r"""
                    By induction with Pascal's rule
                    $\binom{n+1}{k}=\binom{n}{k}+\binom{n}{k-1}$: every entry $\binom{n}{k}$ of row
                    $n$ is used
                    twice when building row $n+1$, so each row sum is twice the previous one.
                    """,
                ],
            ),
            (
                "comb-2",
                r"Combinatorial proof of Vandermonde's identity",
                ["combinatorial-proofs"],
                r"""
                Is there a combinatorial proof of
                $\sum_{k}\binom{m}{k}\binom{n}{r-k}=\binom{m+n}{r}$?
                """,
                [
                    r"""
                    Choose a committee of $r$ people from a group of $m$ men and $n$ women. The
                    right side counts all committees. On the left, $\binom{m}{k}\binom{n}{r-k}$
                    counts the committees with exactly $k$ men, and summing over $k$ counts each
                    committee exactly once.
                    """,
                    r"""
                    Algebraically, compare coefficients of $x^r$ in
                    $(1+x)^m(1+x)^n=(1+x)^{m+n}$. The special case $m=n=r$ gives the pretty
                    identity $$\sum_{k=0}^n\binom{n}{k}^2=\binom{2n}{n}.$$
                    """,
                    r"""
                    The identity even holds in the form
                    $\binom{x+y}{r}=\sum_k\binom{x}{k}\binom{y}{r-k}$ for real or complex $x,y$
                    (Chu–Vandermonde). Both sides are polynomials in $x$ and $y$ that agree on all
                    natural numbers, so they agree everywhere.
                    """,
                ],
            ),
            (
                "comb-3",
                r"Number of ways to put $10$ identical balls into $4$ boxes",
                ["balls-in-bins"],
                r"""
                In how many ways can $10$ identical balls be distributed into $4$ distinguishable
                boxes, if boxes may stay empty? And what if every box must get at least one ball?
                """,
                [
                    r"""
                    This is <em>stars and bars</em>. A distribution corresponds to a row of $10$
                    stars and $3$ bars, i.e. to a non-negative integer solution of
                    $x_1+x_2+x_3+x_4=10$. Choosing the positions of the bars gives
                    $$\binom{10+4-1}{4-1}=\binom{13}{3}=286.$$
                    """,
                    r"""
                    If no box may be empty, first put one ball in each box and distribute the
                    remaining $6$ freely: $\binom{6+3}{3}=84$. Equivalently, place $3$ bars in
                    the $9$ gaps between the balls, which gives $\binom{9}{3}=84$.
                    """,
                    r"""
                    Generating functions handle extra constraints. The number of distributions is
                    the coefficient of $x^{10}$ in $(1-x)^{-4}=\sum_n\binom{n+3}{3}x^n$. If each
                    box holds at most $5$ balls, take the coefficient in
                    $\left(\frac{1-x^6}{1-x}\right)^4$ instead; inclusion–exclusion gives
                    $$\binom{13}{3}-4\binom{7}{3}=286-140=146,$$
                    since two boxes cannot both exceed $5$.
                    """,
                    r"""
                    Be careful with the wording of such problems: if the balls are
                    distinguishable, each ball independently chooses a box and the answer is
                    $4^{10}=1048576$, a completely different count.
                    """,
                ],
            ),
            (
                "comb-4",
                r"Derangements: probability that no letter is in the right envelope",
                ["probability", "inclusion-exclusion"],
                r"""
                $n$ letters are put at random into $n$ addressed envelopes. What is the
                probability that no letter ends up in its own envelope, and what happens as
                $n\to\infty$?
                """,
                [
                    r"""
                    By inclusion–exclusion the number of derangements is
                    $$D_n=n!\sum_{k=0}^n\frac{(-1)^k}{k!},$$
                    so the probability is $\frac{D_n}{n!}\to e^{-1}\approx 0.3679$. For example
                    $D_4=9$, giving $\frac{9}{24}=0.375$. See also
                    <a href="https://en.wikipedia.org/wiki/Derangement">derangement</a>.
                    """,
                    r"""
                    There is also a recurrence: $D_n=(n-1)\left(D_{n-1}+D_{n-2}\right)$ with
                    $D_1=0$ and $D_2=1$. It gives $D_3=2$, $D_4=9$, $D_5=44$. The factor $n-1$ is
                    the number of places letter $1$ can go.
                    """,
                    r"""
                    A compact closed form: for $n\geq 1$, $D_n$ is the integer nearest to
                    $\frac{n!}{e}$, because the tail of the series for $e^{-1}$ is smaller than
                    $\frac{1}{(n+1)!}$ in absolute value.
                    """,
                ],
            ),
        ],
    ),
    (
        "probability",
        ["probability"],
        [
            (
                "prob-1",
                r"Probability of at least one six in four rolls of a die",
                ["dice"],
                r"""
                A fair die is rolled four times. What is the probability of getting at least one
                six?
                """,
                [
                    r"""
                    Use the complement. Of the $6^4=1296$ equally likely outcomes, $5^4=625$
                    contain no six, so
                    $$1-\left(\frac{5}{6}\right)^4=1-\frac{625}{1296}=\frac{671}{1296}\approx
                    0.518.$$
                    """,
                    r"""
                    Simply adding $\frac{1}{6}$ four times gives $\frac{2}{3}$, which is wrong
                    because the events are not disjoint. This is the famous question of the
                    Chevalier de Méré, who compared it with getting a double six in $24$ rolls of
                    two dice: $1-\left(\frac{35}{36}\right)^{24}\approx 0.491$, slightly less than
                    one half.
                    """,
                ],
            ),
            (
                "prob-2",
                r"Monty Hall problem: why does switching win with probability $\frac{2}{3}$?",
                ["conditional-probability", "puzzle"],
                r"""
                In the <a href="https://en.wikipedia.org/wiki/Monty_Hall_problem">Monty Hall
                problem</a> there are two closed doors left after the host opens one, so I would
                say each has probability $\frac{1}{2}$. Why is switching better?
                """,
                [
                    r"""
                    Your first choice hides the car with probability $\frac{1}{3}$, and the host's
                    action (he always opens a door with a goat) gives you no information about
                    your own door. The remaining probability $\frac{2}{3}$ is therefore
                    concentrated on the other closed door.
                    """,
                    r"""
                    With Bayes' theorem: you pick door $1$ and the host opens door $3$. Then
                    $P(H_3\mid C_1)=\frac{1}{2}$, $P(H_3\mid C_2)=1$ and $P(H_3\mid C_3)=0$, so
                    $$P(C_2\mid
                    H_3)=\frac{1\cdot\frac{1}{3}}{\frac{1}{2}\cdot\frac{1}{3}+1\cdot\frac{1}{3}}=
                    \frac{2}{3}.$$
                    """,
                    r"""
                    Imagine $100$ doors: you pick one, the host opens $98$ goat doors. Switching
                    now wins with probability $\frac{99}{100}$. The key is that the host knows
                    where the car is; if he opened a random door and happened to show a goat, the
                    two remaining doors really would be $\frac{1}{2}$ each.
                    """,
                    r"""
                    If you are still unconvinced, simulate it:

                    <ol><li>place the car with <code>random.randrange(3)</code>;</li><li>let the
                    player pick a door at random;</li><li>let the host open a goat door the player
                    did not pick.</li></ol>

                    After $10^5$ games the switching strategy wins about $66.7\%$ of the time.
                    """,
                ],
            ),
            (
                "prob-3",
                r"Expected number of rolls until the first six",
                ["expectation", "dice"],
                r"""
                On average, how many times do I have to roll a fair die until a six appears for
                the first time?
                """,
                [
                    r"""
                    The number of rolls $N$ is geometric with $p=\frac{1}{6}$, so
                    $$E[N]=\sum_{k=1}^\infty k(1-p)^{k-1}p=\frac{1}{p}=6.$$
                    """,
                    r"""
                    First-step analysis avoids the series. After the first roll, either you have
                    a six (probability $\frac{1}{6}$) or you start over having used one roll. So
                    $E=1+\frac{5}{6}E$, which gives $E=6$.
                    """,
                    r"""
                    Two more facts about the same variable: the variance is
                    $\frac{1-p}{p^2}=30$, and the tail is $P(N>k)=\left(\frac{5}{6}\right)^k$.
                    Summing the tail gives the expectation again:
                    $E[N]=\sum_{k\geq 0}P(N>k)=6$.
                    """,
                    r"""
                    A natural follow-up is the coupon collector problem: the expected number of
                    rolls until all six faces have appeared is
                    $6\left(1+\frac{1}{2}+\cdots+\frac{1}{6}\right)=14.7$.
                    """,
                ],
            ),
            (
                "prob-4",
                r"Positive test for a rare disease: what is the probability of being ill?",
                ["bayes-theorem", "conditional-probability"],
                r"""
                A disease affects $1\%$ of the population. A test detects it in $99\%$ of sick
                people, but also gives a positive result for $5\%$ of healthy people. If I test
                positive, how likely is it that I am actually ill?
                """,
                [
                    r"""
                    By Bayes' theorem,
                    $$P(D\mid +)=\frac{P(+\mid D)P(D)}{P(+\mid D)P(D)+P(+\mid
                    D^c)P(D^c)}=\frac{0.99\cdot 0.01}{0.99\cdot 0.01+0.05\cdot 0.99}=\frac{1}{6}.$$
                    So only about $16.7\%$, despite the accurate-sounding test.
                    """,
                    r"""
                    Natural frequencies make it intuitive. Among $10000$ people, $100$ are ill and
                    $99$ of them test positive; of the $9900$ healthy people, $495$ test positive.
                    So only $\frac{99}{594}=\frac{1}{6}$ of the positives are ill.
                    """,
                    r"""
                    A second, independent positive test changes the picture. In odds form the
                    prior odds are now $\frac{1}{5}$ and the likelihood ratio of a positive result
                    is $\frac{0.99}{0.05}=19.8$, so the posterior odds are $3.96$, a probability
                    of about $0.80$.
                    """,
                ],
            ),
        ],
    ),
    (
        "group-theory",
        ["abstract-algebra", "group-theory"],
        [
            (
                "grp-1",
                r"Every group of prime order is cyclic",
                ["finite-groups"],
                r"""
                Let $G$ be a group with $|G|=p$ prime. Why must $G$ be cyclic?
                """,
                [
                    r"""
                    Take any $g\neq e$. By Lagrange's theorem the order of the subgroup
                    $\langle g\rangle$ divides $p$, and it is larger than $1$, so it equals $p$.
                    Hence $G=\langle g\rangle\cong\mathbb{Z}/p\mathbb{Z}$.
                    """,
                    r"""
                    So up to isomorphism there is exactly one group of order $p$. It is abelian,
                    and every non-identity element generates it. The smallest non-abelian group
                    has order $6$: the symmetric group $S_3$.
                    """,
                    r"""
                    For comparison, a group of order $p^2$ is still abelian, but it can be either
                    $\mathbb{Z}/p^2\mathbb{Z}$ or
                    $\mathbb{Z}/p\mathbb{Z}\times\mathbb{Z}/p\mathbb{Z}$.
                    A group of order $pq$ with distinct primes need not even be abelian, as
                    $S_3$ shows.
                    """,
                ],
            ),
            (
                "grp-2",
                r"Is a subgroup of index $2$ always normal?",
                ["normal-subgroups"],
                r"""
                Let $H\leq G$ with $[G:H]=2$. Is $H$ necessarily a normal subgroup? What about
                index $3$?
                """,
                [
                    r"""
                    Yes. There are only two left cosets, $H$ and $G\setminus H$, and likewise only
                    two right cosets, $H$ and $G\setminus H$. So for $g\notin H$ we get
                    $gH=G\setminus H=Hg$, and for $g\in H$ trivially $gH=H=Hg$.
                    """,
                    r"""
                    The standard example is $A_n\trianglelefteq S_n$: it has index $2$ because
                    $|S_n|=n!$ and $|A_n|=\frac{n!}{2}$. Index $3$ is not enough:
                    $H=\langle(1\,2)\rangle$ has index $3$ in $S_3$, but
                    $(1\,3)(1\,2)(1\,3)^{-1}=(2\,3)\notin H$.
                    """,
                    r"""
                    The right generalization: if $G$ is finite and $[G:H]=p$ is the smallest
                    prime dividing $|G|$, then $H$ is normal. The proof lets $G$ act on the $p$
                    cosets of $H$ and looks at the kernel of $G\to S_p$.
                    """,
                    r"""
                    A concrete check in $S_3$ with $H=A_3=\{e,(1\,2\,3),(1\,3\,2)\}$: both
                    $(1\,2)H$ and $H(1\,2)$ equal $\{(1\,2),(1\,3),(2\,3)\}$, the set of odd
                    permutations.
                    """,
                ],
            ),
            (
                "grp-3",
                r"Number of generators of the cyclic group $\mathbb{Z}/n\mathbb{Z}$",
                ["cyclic-groups"],
                r"""
                Which elements generate $\mathbb{Z}/n\mathbb{Z}$, and how many are there? For
                $n=12$ I found $1$ and $11$, are there more?
                """,
                [
                    r"""
                    The element $k$ has order $\frac{n}{\gcd(k,n)}$, so it generates iff
                    $\gcd(k,n)=1$. The number of generators is Euler's $\varphi(n)$. In
                    $\mathbb{Z}/12\mathbb{Z}$ the generators are $1,5,7,11$, and indeed
                    $\varphi(12)=4$.
                    """,
                    r"""
                    More structure: $\mathbb{Z}/n\mathbb{Z}$ has exactly one subgroup for each
                    divisor $d$ of $n$, namely $\langle n/d\rangle$ of order $d$. Counting
                    elements by their order gives the identity $$\sum_{d\mid n}\varphi(d)=n.$$
                    """,
                    r"""
                    For example, in $\mathbb{Z}/12\mathbb{Z}$ the element $8$ has order
                    $\frac{12}{\gcd(8,12)}=3$: its multiples are $8$, $16\equiv 4$ and
                    $24\equiv 0$. The elements of order $3$ are $4$ and $8$, matching
                    $\varphi(3)=2$.
                    """,
                ],
            ),
            (
                "grp-4",
                (
                    r"Kernel of $\det:GL_n(\mathbb{R})\to\mathbb{R}^\times$"
                    r" and the first isomorphism theorem"
                ),
                ["group-homomorphism"],
                r"""
                I am trying to understand the first isomorphism theorem through an example. What
                is the kernel of $\det:GL_n(\mathbb{R})\to\mathbb{R}^\times$, and what does the
                theorem say here?
                """,
                [
                    r"""
                    Since $\det(AB)=\det A\det B$, the determinant is a homomorphism. It is
                    surjective, because $\det\operatorname{diag}(t,1,\dots,1)=t$, and its kernel
                    is $SL_n(\mathbb{R})$. The first isomorphism theorem gives
                    $$GL_n(\mathbb{R})/SL_n(\mathbb{R})\cong\mathbb{R}^\times.$$
                    In particular $SL_n(\mathbb{R})$ is normal, as every kernel is.
                    """,
                    r"""
                    Two more examples of the same kind: the sign homomorphism
                    $\operatorname{sgn}:S_n\to\{\pm 1\}$ has kernel $A_n$, so
                    $S_n/A_n\cong\mathbb{Z}/2\mathbb{Z}$; and $\exp:\mathbb{R}\to\mathbb{R}_{>0}$
                    is an isomorphism from the additive to the multiplicative group, with trivial
                    kernel.
                    """,
                    r"""
                    The proof itself is short. Define $\bar\varphi(gK)=\varphi(g)$, where
                    $K=\ker\varphi$. This is well defined because
                    $gK=hK\iff h^{-1}g\in K\iff\varphi(g)=\varphi(h)$, and the same chain of
                    equivalences shows that $\bar\varphi$ is injective.
                    """,
                ],
            ),
        ],
    ),
    (
        "topology",
        ["general-topology"],
        [
            (
                "top-1",
                r"Is an intersection of infinitely many open sets open?",
                ["real-analysis"],
                r"""
                The axioms of a topology require finite intersections of open sets to be open.
                Does the same hold for infinite intersections in $\mathbb{R}$?
                """,
                [
                    r"""
                    No. In $\mathbb{R}$,
                    $$\bigcap_{n=1}^\infty\left(-\frac{1}{n},\frac{1}{n}\right)=\{0\},$$
                    which is not open. That is exactly why the axioms ask only for finite
                    intersections, but for arbitrary unions.
                    """,
                    r"""
                    Compare with the finite case: if $x\in U_1\cap\dots\cap U_k$, pick balls
                    $B(x,r_i)\subseteq U_i$ and let $r=\min_ir_i>0$. With infinitely many sets
                    the infimum of the $r_i$ may be $0$, which is what happens in the example.
                    """,
                    r"""
                    Dually, arbitrary intersections of closed sets are closed, but infinite unions
                    of closed sets need not be: $\bigcup_{n\geq 1}\left[\frac{1}{n},1\right]=(0,1]$.
                    """,
                    r"""
                    In some spaces arbitrary intersections of open sets are open, for example in
                    the discrete topology, where $\{0\}$ is open, or in any finite space, where
                    every intersection is a finite one. Such topologies are called Alexandrov
                    topologies.
                    """,
                ],
            ),
            (
                "top-2",
                r"Is $\mathbb{Q}$ open or closed in $\mathbb{R}$?",
                ["real-analysis"],
                r"""
                Is the set of rational numbers $\mathbb{Q}$ an open subset of $\mathbb{R}$, a
                closed subset, or neither?
                """,
                [
                    r"""
                    Neither. It is not open because every interval around a rational number
                    contains irrationals. It is not closed because $\sqrt{2}\notin\mathbb{Q}$ is a
                    limit of rationals $1,1.4,1.41,1.414,\dots$. In fact
                    $\overline{\mathbb{Q}}=\mathbb{R}$ and the interior of $\mathbb{Q}$ is empty.
                    """,
                    r"""
                    A finer statement: $\mathbb{Q}$ is an $F_\sigma$ set (a countable union of
                    closed singletons), but it is not a $G_\delta$ set. The latter follows from
                    the Baire category theorem.
                    """,
                    r"""
                    Keep in mind that open and closed are not opposites. In $\mathbb{R}$ the sets
                    $\emptyset$ and $\mathbb{R}$ are both open and closed, while $[0,1)$ is
                    neither.
                    """,
                ],
            ),
            (
                "top-3",
                r"Continuity in terms of preimages of open sets",
                ["continuity", "metric-spaces"],
                r"""
                Why is the $\varepsilon$-$\delta$ definition of continuity equivalent to the
                requirement that $f^{-1}(V)$ is open for every open set $V$?
                """,
                [
                    r"""
                    Suppose $f$ is $\varepsilon$-$\delta$ continuous and $V$ is open. If
                    $f(x)\in V$, choose $\varepsilon$ with $B(f(x),\varepsilon)\subseteq V$;
                    continuity gives $\delta$ with $B(x,\delta)\subseteq f^{-1}(V)$, so
                    $f^{-1}(V)$ is open. Conversely, apply the open-set condition to
                    $V=B(f(x),\varepsilon)$.
                    """,
                    r"""
                    Note the direction: images of open sets need not be open. The continuous map
                    $f(x)=x^2$ sends $(-1,1)$ to $[0,1)$. Maps that send open sets to open sets
                    are called open maps, and that is a different property.
                    """,
                    r"""
                    The preimage criterion is very practical. For example
                    $\{(x,y):x^2+y^2<1\}$ is open, because it is the preimage of the open set
                    $(-\infty,1)$ under the continuous function $(x,y)\mapsto x^2+y^2$.
                    """,
                ],
            ),
            (
                "top-4",
                r"Why is $[0,1]$ compact but $(0,1)$ is not?",
                ["compactness"],
                r"""
                I know the definition of compactness via open covers. Why is $[0,1]$ compact while
                $(0,1)$ is not?
                """,
                [
                    r"""
                    By the <a
                    href="https://en.wikipedia.org/wiki/Heine%E2%80%93Borel_theorem">Heine–Borel
                    theorem</a>, a subset of $\mathbb{R}^n$ is compact iff it is closed and
                    bounded. The interval $(0,1)$ is not closed, and explicitly the cover
                    $\left(\frac{1}{n},1\right)$, $n\geq 2$, has no finite subcover.
                    """,
                    r"""
                    A direct proof for $[0,1]$: given an open cover, let
                    $s=\sup\{x\in[0,1]:[0,x]\text{ is covered by finitely many sets}\}$. The set
                    containing $s$ covers a neighbourhood of $s$, which shows both that the
                    supremum is attained and that $s<1$ is impossible.
                    """,
                    r"""
                    Closed and bounded is not enough in general metric spaces. The closed unit
                    ball of $\ell^2$ is not compact: the unit vectors satisfy
                    $\|e_m-e_n\|_2=\sqrt{2}$ for $m\neq n$, so they have no convergent
                    subsequence.
                    """,
                ],
            ),
        ],
    ),
    (
        "complex-numbers",
        ["complex-numbers"],
        [
            (
                "cx-1",
                r"Finding all cube roots of $8i$",
                ["roots-of-unity"],
                r"""
                I need to solve $z^3=8i$. I found $z=-2i$ by guessing, but there should be three
                solutions. How do I find the others?
                """,
                [
                    r"""
                    Write the right side in polar form: $8i=8e^{i\pi/2}$. Then
                    $$z=2e^{i(\frac{\pi}{6}+\frac{2k\pi}{3})},\qquad k=0,1,2,$$
                    which gives $\sqrt{3}+i$, $-\sqrt{3}+i$ and $-2i$.
                    """,
                    r"""
                    Your guess checks out: $(-2i)^3=-8i^3=8i$. The three roots add up to $0$,
                    because $z^3-8i$ has no $z^2$ term, and they form an equilateral triangle on
                    the circle of radius $2$.
                    """,
                    r"""
                    In general, for $w=re^{i\theta}\neq 0$ the equation $z^n=w$ has exactly $n$
                    solutions $$\sqrt[n]{r}\,e^{i(\theta+2k\pi)/n},\qquad k=0,\dots,n-1,$$
                    equally spaced around a circle. Different $k$ give different points because
                    the angles differ by multiples of $\frac{2\pi}{n}$.
                    """,
                    r"""
                    There is also a purely algebraic route. With $z=a+bi$,
                    $(a+bi)^3=a^3-3ab^2+i(3a^2b-b^3)$, so we need $a(a^2-3b^2)=0$ and
                    $3a^2b-b^3=8$. If $a=0$ then $b=-2$; if $a^2=3b^2$ then $8b^3=8$, so $b=1$
                    and $a=\pm\sqrt{3}$.
                    """,
                ],
            ),
            (
                "cx-2",
                r"Why is $e^{i\pi}+1=0$?",
                ["exponential-function"],
                r"""
                How should I understand Euler's identity $e^{i\pi}+1=0$? What does it even mean
                to raise $e$ to an imaginary power?
                """,
                [
                    r"""
                    Define $e^z$ by its power series and split it into even and odd terms. For
                    real $\theta$ this gives Euler's formula $e^{i\theta}=\cos\theta+i\sin\theta$,
                    and at $\theta=\pi$ we get $\cos\pi+i\sin\pi=-1$.
                    """,
                    r"""
                    A derivation without series: let
                    $f(\theta)=e^{-i\theta}(\cos\theta+i\sin\theta)$.
                    Then $f'(\theta)=0$ and $f(0)=1$, so $f\equiv 1$, which is Euler's formula.
                    """,
                    r"""
                    Geometrically, multiplying by $e^{i\theta}$ rotates the plane by the angle
                    $\theta$, so $e^{i\pi}$ is a half turn and equals $-1$. You can also watch it
                    happen: $\left(1+\frac{i\pi}{n}\right)^n\to-1$ as $n\to\infty$.
                    """,
                    r"""
                    A surprising consequence: with the principal logarithm,
                    $i^i=e^{i\log i}=e^{-\pi/2}\approx 0.2079$, which is a real number.
                    """,
                ],
            ),
            (
                "cx-3",
                r"Using De Moivre's formula to express $\cos 3\theta$ in terms of $\cos\theta$",
                ["trigonometry"],
                r"""
                How can I use De Moivre's formula to write $\cos 3\theta$ as a polynomial in
                $\cos\theta$?
                """,
                [
                    r"""
                    By De Moivre, $(\cos\theta+i\sin\theta)^3=\cos 3\theta+i\sin 3\theta$. Expand
                    the left side and compare real parts:
                    $$\cos 3\theta=\cos^3\theta-3\cos\theta\sin^2\theta=4\cos^3\theta-3\cos\theta.$$
                    The imaginary parts give $\sin 3\theta=3\sin\theta-4\sin^3\theta$.
                    """,
                    r"""
                    This generalizes to the Chebyshev polynomials, defined by
                    $T_n(\cos\theta)=\cos n\theta$. Here $T_3(x)=4x^3-3x$, and they satisfy the
                    recurrence $T_{n+1}(x)=2xT_n(x)-T_{n-1}(x)$.
                    """,
                ],
            ),
            (
                "cx-4",
                r"Paradox: $\sqrt{-1}\cdot\sqrt{-1}=\sqrt{(-1)(-1)}=1$?",
                ["fake-proofs"],
                r"""
                Here is an argument that $-1=1$: $-1=i\cdot
                i=\sqrt{-1}\cdot\sqrt{-1}=\sqrt{(-1)(-1)}=\sqrt{1}=1$.
                Which step is wrong?
                """,
                [
                    r"""
                    The rule $\sqrt{ab}=\sqrt{a}\sqrt{b}$ is only valid for $a,b\geq 0$. With the
                    principal branch $\sqrt{-1}=i$ we have $i\cdot i=-1$, and the step
                    $\sqrt{-1}\cdot\sqrt{-1}=\sqrt{(-1)(-1)}$ is the invalid one.
                    """,
                    r"""
                    The complex square root is really two-valued. The principal branch is
                    $\sqrt{z}=\sqrt{|z|}e^{i\operatorname{Arg}(z)/2}$ with
                    $\operatorname{Arg}z\in(-\pi,\pi]$. In general $\sqrt{zw}=\pm\sqrt{z}\sqrt{w}$,
                    and the sign is wrong exactly when $\operatorname{Arg}z+\operatorname{Arg}w$
                    leaves $(-\pi,\pi]$.
                    """,
                    r"""
                    The same issue appears with logarithms:
                    $\operatorname{Log}(zw)\neq\operatorname{Log}z+\operatorname{Log}w$ in
                    general. For $z=w=-1$ the left side is $\operatorname{Log}1=0$, while the
                    right side is $2\operatorname{Log}(-1)=2\pi i$.
                    """,
                ],
            ),
        ],
    ),
    (
        "trigonometry",
        ["trigonometry"],
        [
            (
                "trig-1",
                r"Prove that $\frac{1-\cos 2x}{\sin 2x}=\tan x$",
                ["algebra-precalculus"],
                r"""
                How do I prove the identity $\frac{1-\cos 2x}{\sin 2x}=\tan x$? Should I start
                from the left side or the right side?
                """,
                [
                    r"""
                    Start from the left and use the double angle formulas
                    $1-\cos 2x=2\sin^2x$ and $\sin 2x=2\sin x\cos x$:
                    $$\frac{1-\cos 2x}{\sin 2x}=\frac{2\sin^2x}{2\sin x\cos x}=\frac{\sin x}{\cos
                    x}=\tan x.$$
                    """,
                    r"""
                    This is the tangent half-angle formula in disguise: with $\theta=2x$,
                    $$\tan\frac{\theta}{2}=\frac{1-\cos\theta}{\sin\theta}=\frac{\sin\theta}{1+\cos
                    \theta}.$$
                    Both forms are handy when integrating rational functions of sine and cosine.
                    """,
                    r"""
                    Mind the domain: the identity fails at $x=\frac{\pi}{2}$, where $\tan x$ is
                    undefined, and at $x=0$, where the left side is $\frac{0}{0}$. Both sides
                    agree for all $x\notin\frac{\pi}{2}\mathbb{Z}$.
                    """,
                ],
            ),
            (
                "trig-2",
                r"Derivation of $\sin(a+b)=\sin a\cos b+\cos a\sin b$",
                ["proof-explanation"],
                r"""
                I have memorised the addition formula $\sin(a+b)=\sin a\cos b+\cos a\sin b$ but I
                have never seen a derivation. Is there a clean one?
                """,
                [
                    r"""
                    With Euler's formula $e^{i\theta}=\cos\theta+i\sin\theta$, expand
                    $e^{i(a+b)}=e^{ia}e^{ib}$:
                    $$\cos(a+b)+i\sin(a+b)=(\cos a\cos b-\sin a\sin b)+i(\sin a\cos b+\cos a\sin
                    b).$$
                    The imaginary parts give the sine formula and the real parts give
                    $\cos(a+b)=\cos a\cos b-\sin a\sin b$ for free.
                    """,
                    r"""
                    Rotation matrices give the same result without complex numbers. With
                    $R_\theta=\begin{pmatrix}\cos\theta&-\sin\theta\\\sin\theta&\cos\theta
                    \end{pmatrix}$,
                    rotating by $b$ and then by $a$ is rotating by $a+b$, so $R_aR_b=R_{a+b}$.
                    Multiplying out and comparing the lower left entries gives the sine formula.
                    """,
                    r"""
                    Some consequences worth knowing: $b=a$ gives $\sin 2a=2\sin a\cos a$,
                    replacing $b$ by $-b$ gives $\sin(a-b)$, and with $45^\circ$ and $30^\circ$
                    you get $$\sin 75^\circ=\frac{\sqrt{6}+\sqrt{2}}{4}.$$
                    """,
                ],
            ),
            (
                "trig-3",
                r"Solve $2\sin^2x-3\sin x+1=0$ on $[0,2\pi)$",
                ["quadratics"],
                r"""
                How do I solve $2\sin^2x-3\sin x+1=0$ for $x\in[0,2\pi)$? I am not sure how to
                deal with the square of the sine.
                """,
                [
                    r"""
                    Substitute $t=\sin x$. The equation becomes $2t^2-3t+1=(2t-1)(t-1)=0$, so
                    $\sin x=\frac{1}{2}$ or $\sin x=1$. On $[0,2\pi)$ this gives
                    $x=\frac{\pi}{6}$, $x=\frac{5\pi}{6}$ and $x=\frac{\pi}{2}$; in general
                    $x=\frac{\pi}{6}+2k\pi$, $x=\frac{5\pi}{6}+2k\pi$ or $x=\frac{\pi}{2}+2k\pi$.

                    Note that at $x=\frac{\pi}{2}$ the function touches zero without changing
                    sign, since $t=1$ is the maximum of $\sin x$. A root finder based on sign
                    changes would miss that solution.
                    """,
                ],
            ),
            (
                "trig-4",
                r"Closed form for $\sum_{k=1}^n\sin(kx)$",
                ["summation"],
                r"""
                Is there a closed form for $\sum_{k=1}^n\sin(kx)$? I tried small $n$ but did not see
                a pattern.
                """,
                [
                    r"""
                    Multiply by $2\sin\frac{x}{2}$ and use
                    $2\sin\frac{x}{2}\sin
                    kx=\cos\left(k-\frac{1}{2}\right)x-\cos\left(k+\frac{1}{2}\right)x$.
                    The sum telescopes to $\cos\frac{x}{2}-\cos\left(n+\frac{1}{2}\right)x$, and
                    therefore
                    $$\sum_{k=1}^n\sin
                    kx=\frac{\sin\frac{nx}{2}\sin\frac{(n+1)x}{2}}{\sin\frac{x}{2}}.$$
                    """,
                    r"""
                    With complex numbers, take the imaginary part of the geometric sum
                    $$\sum_{k=1}^ne^{ikx}=e^{ix}\frac{e^{inx}-1}{e^{ix}-1}.$$
                    Writing $e^{inx}-1=2ie^{inx/2}\sin\frac{nx}{2}$ and similarly for the
                    denominator gives the same closed form.
                    """,
                    r"""
                    The cosine version is
                    $\sum_{k=1}^n\cos
                    kx=\frac{\sin\frac{nx}{2}\cos\frac{(n+1)x}{2}}{\sin\frac{x}{2}}$.
                    It is closely related to the Dirichlet kernel
                    $D_n(x)=1+2\sum_{k=1}^n\cos
                    kx=\frac{\sin\left(\left(n+\frac{1}{2}\right)x\right)}{\sin\frac{x}{2}}$
                    from Fourier series.
                    """,
                ],
            ),
        ],
    ),
    (
        "quadratics",
        ["algebra-precalculus", "quadratics"],
        [
            (
                "quad-1",
                r"Derivation of the quadratic formula",
                ["polynomials"],
                r"""
                Where does the formula $x=\frac{-b\pm\sqrt{b^2-4ac}}{2a}$ for the roots of
                $ax^2+bx+c=0$ come from?
                """,
                [
                    r"""
                    Complete the square. Dividing by $a\neq 0$ and adding
                    $\left(\frac{b}{2a}\right)^2$ to both sides,
                    $$\begin{align*}
                    ax^2+bx+c=0&\iff x^2+\frac{b}{a}x=-\frac{c}{a}\\
                    &\iff\left(x+\frac{b}{2a}\right)^2=\frac{b^2-4ac}{4a^2},
                    \end{align*}$$
                    and taking square roots gives $x=\frac{-b\pm\sqrt{b^2-4ac}}{2a}$.
                    """,
                    r"""
                    A version without fractions: multiply by $4a$ to get
                    $4a^2x^2+4abx=-4ac$, then add $b^2$ to both sides:
                    $(2ax+b)^2=b^2-4ac$. This trick goes back to the Indian mathematician
                    Sridhara.
                    """,
                    r"""
                    A numerical remark: when $b^2\gg|4ac|$, one of the two roots suffers from
                    cancellation. Compute
                    $x_1=\frac{-b-\operatorname{sign}(b)\sqrt{b^2-4ac}}{2a}$ first and then
                    $x_2=\frac{c}{ax_1}$ from Vieta's formula for the product of the roots.
                    """,
                    r"""
                    A worked example: for $2x^2-3x-2=0$,
                    $$x=\frac{3\pm\sqrt{9+16}}{4}=\frac{3\pm 5}{4},$$
                    so $x=2$ or $x=-\frac{1}{2}$.
                    """,
                ],
            ),
            (
                "quad-2",
                r"Find $\alpha^2+\beta^2$ for the roots of $x^2-5x+3=0$ without solving",
                ["vieta-formulas"],
                r"""
                Let $\alpha,\beta$ be the roots of $x^2-5x+3=0$. Is there a way to find
                $\alpha^2+\beta^2$ without computing the roots?
                """,
                [
                    r"""
                    By Vieta, $\alpha+\beta=5$ and $\alpha\beta=3$. Then
                    $$\alpha^2+\beta^2=(\alpha+\beta)^2-2\alpha\beta=25-6=19.$$
                    """,
                    r"""
                    The same idea gives other symmetric expressions:
                    $\frac{1}{\alpha}+\frac{1}{\beta}=\frac{\alpha+\beta}{\alpha\beta}=\frac{5}{3}$
                    and $\alpha^3+\beta^3=(\alpha+\beta)^3-3\alpha\beta(\alpha+\beta)=125-45=80$.
                    """,
                    r"""
                    For higher powers use Newton's sums. Since each root satisfies
                    $x^2=5x-3$, the power sums $p_k=\alpha^k+\beta^k$ obey
                    $p_k=5p_{k-1}-3p_{k-2}$. Starting from $p_0=2$ and $p_1=5$ we get $p_2=19$
                    and $p_3=80$.
                    """,
                ],
            ),
            (
                "quad-3",
                r"For which $k$ does $x^2+kx+4=0$ have real roots?",
                ["discriminant"],
                r"""
                For which real values of $k$ does the equation $x^2+kx+4=0$ have real roots?
                """,
                [
                    r"""
                    The discriminant is $\Delta=k^2-16$, which is non-negative iff $|k|\geq 4$,
                    i.e. $k\leq-4$ or $k\geq 4$. At $k=\pm 4$ there is a double root, since
                    $x^2\pm 4x+4=(x\pm 2)^2$.
                    """,
                    r"""
                    Without the discriminant: any real root is nonzero, because the product of the
                    roots is $4$. Solving for $k$ gives $k=-\left(x+\frac{4}{x}\right)$, and by
                    AM-GM $\left|x+\frac{4}{x}\right|\geq 4$ for every real $x\neq 0$.
                    """,
                    r"""
                    Completing the square also tells you what happens for $|k|<4$:
                    $$x^2+kx+4=\left(x+\frac{k}{2}\right)^2+4-\frac{k^2}{4}>0,$$
                    so the parabola stays strictly above the $x$-axis.
                    """,
                ],
            ),
            (
                "quad-4",
                r"Solving the biquadratic equation $x^4-5x^2+4=0$",
                ["polynomials"],
                r"""
                How do I solve $x^4-5x^2+4=0$? It looks like a quadratic, but the degree is four.
                """,
                [
                    r"""
                    Substitute $t=x^2$: $t^2-5t+4=(t-1)(t-4)=0$, so $t=1$ or $t=4$ and
                    $x=\pm 1$ or $x=\pm 2$.
                    """,
                    r"""
                    You can also factor directly:
                    $$x^4-5x^2+4=(x-1)(x+1)(x-2)(x+2).$$
                    As a check, the roots add up to $0$ (there is no $x^3$ term) and their product
                    is $4$, as Vieta's formulas predict for a quartic.
                    """,
                    r"""
                    If the substitution produces a negative value of $t$, the corresponding $x$ are
                    imaginary. For example $x^4+3x^2-4=0$ gives $(t+4)(t-1)=0$, so
                    $x=\pm 1,\pm 2i$.
                    """,
                ],
            ),
        ],
    ),
    (
        "logarithms",
        ["algebra-precalculus", "logarithms"],
        [
            (
                "log-1",
                r"Why is $\log_b(xy)=\log_bx+\log_by$?",
                ["exponentiation"],
                r"""
                I use the rule $\log_b(xy)=\log_bx+\log_by$ all the time but I do not know why it
                is true.
                """,
                [
                    r"""
                    Let $u=\log_bx$ and $v=\log_by$, so $b^u=x$ and $b^v=y$. Then
                    $xy=b^ub^v=b^{u+v}$, which means $\log_b(xy)=u+v$. The rule is just the law
                    of exponents $b^ub^v=b^{u+v}$ read backwards.
                    """,
                    r"""
                    The other rules follow the same way: $\log_b\frac{x}{y}=\log_bx-\log_by$ and
                    $\log_b(x^r)=r\log_bx$. Historically this is what made slide rules work:
                    multiplication becomes addition of lengths on a logarithmic scale.
                    """,
                    r"""
                    If you define $\ln x=\int_1^x\frac{dt}{t}$, the rule has a calculus proof:
                    $$\ln(xy)=\int_1^x\frac{dt}{t}+\int_x^{xy}\frac{dt}{t},$$
                    and the substitution $t=xs$ turns the second integral into
                    $\int_1^y\frac{ds}{s}=\ln y$.
                    """,
                ],
            ),
            (
                "log-2",
                r"Change of base formula $\log_ab=\frac{\ln b}{\ln a}$",
                ["exponentiation"],
                r"""
                My calculator only has $\ln$ and $\log_{10}$. How do I compute $\log_27$, and why
                does the change of base formula work?
                """,
                [
                    r"""
                    Start from $a^{\log_ab}=b$ and take natural logarithms of both sides:
                    $\log_ab\cdot\ln a=\ln b$. So $$\log_ab=\frac{\ln b}{\ln a},$$ and for
                    example $\log_27=\frac{\ln 7}{\ln 2}\approx 2.807$.
                    """,
                    r"""
                    Two consequences: $\log_ab\cdot\log_ba=1$, and all logarithms are constant
                    multiples of each other. For instance $\log_210\approx 3.3219$ is the number
                    of bits needed per decimal digit.
                    """,
                    r"""
                    A floating point caveat: in Python <code>math.log(1000, 10)</code> computes
                    $\frac{\ln 1000}{\ln 10}$ and returns <code>2.9999999999999996</code>, not
                    exactly $3$. Use <code>math.log10</code> when the base is $10$.
                    """,
                ],
            ),
            (
                "log-3",
                r"Solve $2^x=3^{x-1}$",
                ["exponential-function"],
                r"""
                How do I solve $2^x=3^{x-1}$ for real $x$? The bases are different so I cannot
                just compare exponents.
                """,
                [
                    r"""
                    Take logarithms of both sides: $x\ln 2=(x-1)\ln 3$. Collecting the terms
                    with $x$,
                    $$x=\frac{\ln 3}{\ln 3-\ln 2}=\frac{\ln 3}{\ln\frac{3}{2}}\approx 2.7095.$$
                    """,
                    r"""
                    A quick check: $2^{2.7095}\approx 6.54$ and $3^{1.7095}\approx 6.54$. Note that
                    the solution can also be written as $x=\log_{3/2}3$.
                    """,
                    r"""
                    A common mistake is to write $\log\left(3^{x-1}\right)=(\log 3)^{x-1}$. The
                    power rule brings the exponent down as a factor:
                    $\log\left(3^{x-1}\right)=(x-1)\log 3$.
                    """,
                ],
            ),
            (
                "log-4",
                r"Prove $\ln x\leq x-1$ for all $x>0$",
                ["inequality"],
                r"""
                How can I prove that $\ln x\leq x-1$ for every $x>0$, with equality only at
                $x=1$?
                """,
                [
                    r"""
                    Let $g(x)=x-1-\ln x$. Then $g'(x)=1-\frac{1}{x}$ is negative on $(0,1)$ and
                    positive on $(1,\infty)$, so $g$ has its minimum at $x=1$, where $g(1)=0$.
                    Hence $g(x)\geq 0$, with equality only at $x=1$.
                    """,
                    r"""
                    Concavity gives it at once: $\frac{d^2}{dx^2}\ln x=-\frac{1}{x^2}<0$, so the
                    graph of $\ln$ lies below each of its tangent lines, and the tangent at
                    $x=1$ is $y=x-1$.
                    """,
                    r"""
                    With $x=e^y$ the inequality becomes the familiar $e^y\geq 1+y$. Replacing $x$
                    by $\frac{1}{x}$ gives the lower bound as well:
                    $$1-\frac{1}{x}\leq\ln x\leq x-1\qquad(x>0).$$
                    """,
                ],
            ),
        ],
    ),
    (
        "induction",
        ["induction", "discrete-mathematics"],
        [
            (
                "ind-1",
                r"Prove $1+2+\cdots+n=\frac{n(n+1)}{2}$ by induction",
                ["summation"],
                r"""
                How do I prove $1+2+\cdots+n=\frac{n(n+1)}{2}$ by induction? I understand the
                base case but I am unsure how to write the inductive step.
                """,
                [
                    r"""
                    Base case $n=1$: $1=\frac{1\cdot 2}{2}$. Inductive step: assume the formula for
                    $n$. Then
                    $$\sum_{k=1}^{n+1}k=\frac{n(n+1)}{2}+(n+1)=\frac{(n+1)(n+2)}{2},$$
                    which is the formula for $n+1$.
                    """,
                    r"""
                    Gauss's pairing argument shows where the formula comes from: write the sum
                    forwards and backwards and add,
                    $2S=\sum_{k=1}^n\left(k+(n+1-k)\right)=n(n+1)$.
                    """,
                    r"""
                    The same induction template proves
                    $\sum_{k=1}^nk^2=\frac{n(n+1)(2n+1)}{6}$ and
                    $\sum_{k=1}^nk^3=\left(\frac{n(n+1)}{2}\right)^2$. The second one says the sum
                    of cubes is the square of the sum of the numbers.
                    """,
                    r"""
                    You can even derive the formula without guessing it. Sum the identity
                    $(k+1)^2-k^2=2k+1$ over $k=1,\dots,n$: the left side telescopes to
                    $(n+1)^2-1$ and the right side is $2S+n$, so $S=\frac{n(n+1)}{2}$.
                    """,
                ],
            ),
            (
                "ind-2",
                r"Prove $2^n>n^2$ for all $n\geq 5$",
                ["inequality"],
                r"""
                I want to prove $2^n>n^2$ for all integers $n\geq 5$ by induction. How should the
                inductive step go, and why does it start at $5$?
                """,
                [
                    r"""
                    Base case: $2^5=32>25$. Inductive step: if $2^n>n^2$ then
                    $2^{n+1}=2\cdot 2^n>2n^2$, so it suffices that $2n^2\geq(n+1)^2$. This is
                    equivalent to $n^2-2n-1\geq 0$, which holds for all $n\geq 3$. Hence the
                    statement holds for all $n\geq 5$.
                    """,
                    r"""
                    The starting point matters: for $n=4$ we have $16=16$, which is not a strict
                    inequality, and $n=2,3$ fail as well ($4$ versus $4$ and $8$ versus $9$). The
                    inductive step alone is valid from $n=3$ on, but a true base case is only
                    available at $n=5$.
                    """,
                    r"""
                    More generally, exponentials beat polynomials: for every fixed $k$ we have
                    $2^n>n^k$ for all large $n$, because $\frac{n^k}{2^n}\to 0$. Induction proofs
                    of such statements always need a base case past the last crossing point.
                    """,
                ],
            ),
            (
                "ind-3",
                r"Strong induction: every integer $n\geq 2$ is a product of primes",
                ["prime-numbers"],
                r"""
                Why do proofs that every integer $n\geq 2$ is a product of primes use strong
                induction instead of ordinary induction?
                """,
                [
                    r"""
                    Assume the claim for all $m$ with $2\leq m<n$. If $n$ is prime we are done.
                    Otherwise $n=ab$ with $2\leq a,b<n$, and both factors are products of primes
                    by hypothesis, hence so is $n$. Ordinary induction is awkward here because
                    $a$ and $b$ are usually not $n-1$.
                    """,
                    r"""
                    The same argument can be phrased with the well-ordering principle: a smallest
                    counterexample $n$ cannot be prime, so $n=ab$ with smaller factors, and
                    those are products of primes, a contradiction.
                    """,
                    r"""
                    Existence is the easy half. Uniqueness needs Euclid's lemma
                    ($p\mid ab\Rightarrow p\mid a$ or $p\mid b$), and it fails in other rings: in
                    $\mathbb{Z}[\sqrt{-5}]$ we have $6=2\cdot 3=(1+\sqrt{-5})(1-\sqrt{-5})$.
                    """,
                ],
            ),
            (
                "ind-4",
                r"What is wrong with the induction proof that all horses have the same colour?",
                ["fake-proofs"],
                r"""
                The classic argument: in a set of $n+1$ horses, the first $n$ have the same colour
                and the last $n$ have the same colour, and the two groups overlap, so all $n+1$
                have the same colour. Where is the mistake?
                """,
                [
                    r"""
                    The step from $n=1$ to $n=2$ fails. With two horses the groups are
                    $\{h_1\}$ and $\{h_2\}$, and their overlap is empty, so nothing connects the
                    colours. The implication $P(n)\Rightarrow P(n+1)$ is valid only for
                    $n\geq 2$, and $P(2)$ is false.
                    """,
                    r"""
                    The general lesson is to test the inductive step on the smallest case it is
                    applied to. An overlap argument like this one needs $n+1\geq 3$, so the
                    induction would need $P(2)$ as a base case.
                    """,
                    r"""
                    For contrast, here is a correct induction: Bernoulli's inequality
                    $(1+x)^n\geq 1+nx$ for $x\geq-1$. The step is
                    $$(1+x)^{n+1}\geq(1+nx)(1+x)=1+(n+1)x+nx^2\geq 1+(n+1)x,$$
                    and it uses $1+x\geq 0$ in the first inequality, which is why the hypothesis
                    $x\geq-1$ is needed.
                    """,
                ],
            ),
        ],
    ),
]

# ---------------------------------------------------------------------------
# Topics: new questions (not in the collection), each duplicating one collection question.
# dup_rels: relevance of the duplicate question's answers, in order; related: same-subject
# answers ("key.j" = answer j of question key); unrelated: other-subject answers judged 0.
# formula_rels: Task 2 judgments, (latex, rel) for all instances or (latex, [rels]) for the
# first instances in collection order. "formula" is the Task 2 query formula (B.k).
# ---------------------------------------------------------------------------

TOPICS = [
    {
        "dup": "deriv-1",
        "tags": ["calculus", "derivatives"],
        "title": r"Differentiating $y=x^x$ for $x>0$",
        "body": r"""
            I need the derivative of $y=x^x$ on $x>0$. If I treat it like $x^n$ I get
            $x\cdot x^{x-1}$, and if I treat it like $a^x$ I get $x^x\ln x$. These disagree, so at
            least one of them is wrong.

            I also tried taking logarithms, $\ln y=x\ln x$, but I am not sure how to
            differentiate the left-hand side. What is the correct derivative?
            """,
        "formula": r"\ln y=x\ln x",
        "dup_rels": [3, 3, 2, 2],
        "related": [("deriv-4.0", 1), ("deriv-2.0", 1), ("deriv-3.0", 1)],
        "unrelated": ["log-1.0", "tay-1.0", "lim-2.0"],
        "formula_rels": [
            (r"\ln y=x\ln x", 3),
            (r"\frac{y'}{y}=\ln x+1", 3),
            (r"y'=x^x(1+\ln x)", 3),
            (r"f'(x)=x^x(\ln x+1)", [3, 2]),
            (r"x^x=e^{x\ln x}", 2),
            (r"\frac{d}{dx}x^n=nx^{n-1}", 0),
            (r"\log_b(xy)=\log_bx+\log_by", [0]),
        ],
    },
    {
        "dup": "ibp-1",
        "tags": ["calculus", "integration", "definite-integrals"],
        "title": r"Choosing $u$ and $dv$ for $\int_0^1 xe^x\,dx$",
        "body": r"""
            Our teacher introduced the formula $\int u\,dv=uv-\int v\,du$ and asked us to compute
            $\int_0^1 xe^x\,dx$.

            I set $u=e^x$ and $dv=x\,dx$ and ended up with an integral containing $x^2e^x$, which
            looks even worse. Is there a rule for which factor should be $u$? And what is the
            value of the integral?
            """,
        "formula": r"\int u\,dv=uv-\int v\,du",
        "dup_rels": [3, 3, 2],
        "related": [("ibp-2.0", 2), ("ibp-3.0", 1), ("ibp-4.0", 1)],
        "unrelated": ["deriv-1.0", "tay-1.0", "ser-1.1"],
        "formula_rels": [
            (r"\int u\,dv=uv-\int v\,du", 3),
            (r"\int xe^x\,dx=xe^x-\int e^x\,dx=xe^x-e^x+C.", 3),
            (r"\frac{x^2}{2}e^x-\int\frac{x^2}{2}e^x\,dx", 1),
            (r"I=\frac{e^x(\sin x-\cos x)}{2}+C.", 1),
            (r"\int e^{ax}\,dx=\frac{e^{ax}}{a}", 2),
            (r"\int\ln x\,dx=x\ln x-\int x\cdot\frac{1}{x}\,dx=x\ln x-x+C.", 1),
            (r"\int_1^\infty\frac{dx}{x^2}=1", 0),
        ],
    },
    {
        "dup": "ser-4",
        "tags": ["sequences-and-series", "convergence-divergence"],
        "title": r"Is $\sum_{n=2}^\infty \frac{1}{n \ln n}$ convergent or divergent?",
        "body": r"""
            The terms $\frac{1}{n\ln n}$ are smaller than $\frac{1}{n}$, so comparing with the
            harmonic series does not help, and they are larger than $\frac{1}{n^2}$, so the
            comparison with that series fails too.

            I suspect that the series diverges, because the logarithm grows so slowly. How can I
            prove it?
            """,
        "formula": r"\sum_{n=2}^\infty \frac{1}{n \ln n}",
        "dup_rels": [3, 3],
        "related": [("ser-1.1", 2), ("ser-1.2", 2), ("ser-2.0", 1), ("ser-3.0", 1)],
        "unrelated": ["log-4.0", "tay-3.0", "lim-2.0"],
        "formula_rels": [
            (r"\sum_{n=2}^\infty\frac{1}{n\ln n}", 3),
            (
                r"\int_2^\infty\frac{dx}{x\ln x}"
                r"=\lim_{N\to\infty}\left[\ln\ln x\right]_2^N=\infty,",
                3,
            ),
            (r"\sum_{n=2}^\infty\frac{1}{n(\ln n)^2}", 2),
            (r"2^ka_{2^k}=\frac{2^k}{2^k\ln 2^k}=\frac{1}{k\ln 2},", 2),
            (r"\sum_{n=1}^\infty\frac{1}{n^2}", [1, 1]),
            (r"\sum_{n=1}^\infty\frac{1}{n^p}", 1),
            (r"\ln(1+x)=\sum_{n=1}^\infty\frac{(-1)^{n+1}x^n}{n}", [0]),
        ],
    },
    {
        "dup": "eig-3",
        "tags": ["linear-algebra", "eigenvalues-eigenvectors", "inverse"],
        "title": r"Eigenvalues of $A^{-1}$ when $A$ is invertible",
        "body": r"""
            Let $A$ be an invertible $n\times n$ matrix and suppose $Av=\lambda v$ with
            $v\neq 0$. Is $\frac{1}{\lambda}$ then an eigenvalue of $A^{-1}$ with the same
            eigenvector, i.e. is $A^{-1}v=\frac{1}{\lambda}v$?

            And why can $\lambda$ not be zero in this situation?
            """,
        "formula": r"A^{-1}v=\frac{1}{\lambda}v",
        "dup_rels": [3, 1, 1],
        "related": [("eig-1.0", 1), ("eig-2.0", 1), ("eig-4.0", 1)],
        "unrelated": ["det-1.2", "det-4.1", "norm-4.0"],
        "formula_rels": [
            (r"A^{-1}v=\frac{1}{\lambda}v", 3),
            (r"A^kv=\lambda^kv", 2),
            (r"A^2v=A(\lambda v)=\lambda Av=\lambda^2v", 2),
            (r"Av=\lambda v", [2, 2]),
            (r"p(A)v=p(\lambda)v", 1),
            (r"\det(A^{-1})=\frac{1}{\det A}", 1),
            (r"|\lambda|\|v\|=\|Av\|\leq\|A\|\|v\|", 0),
        ],
    },
    {
        "dup": "norm-2",
        "tags": ["linear-algebra", "matrices", "normed-spaces", "inequality"],
        "title": r"Is the spectral norm always at most the Frobenius norm?",
        "body": r"""
            For a real matrix $A$ let $\|A\|_2$ be the operator norm induced by the Euclidean
            norm, and $\|A\|_F$ the Frobenius norm. In numerical experiments I always observe
            $\|A\|_2\leq\|A\|_F$.

            How can this inequality be proved, and for which matrices do the two norms
            coincide?
            """,
        "formula": r"\|A\|_2\leq\|A\|_F",
        "dup_rels": [3, 3, 2],
        "related": [("norm-1.0", 2), ("norm-1.1", 1), ("norm-3.0", 1), ("norm-4.0", 1)],
        "unrelated": ["eig-4.1", "det-4.1", "tay-2.0"],
        "formula_rels": [
            (r"\|A\|_2\leq\|A\|_F", [3, 3]),
            (r"\|A\|_F^2=\operatorname{tr}(A^TA)=\sum_i\sigma_i^2\geq\sigma_1^2=\|A\|_2^2.", 3),
            (r"\|Ax\|_2^2\leq\|A\|_F^2\|x\|_2^2", 2),
            (r"\|A\|_F\leq\sqrt{r}\|A\|_2", 2),
            (r"\|I_n\|_F=\sqrt{n}", 1),
            (r"\|A\|_2=\sqrt{\mu_1}=\sigma_1", 1),
            (r"\|A\|_1=6", 0),
        ],
    },
    {
        "dup": "mod-1",
        "tags": ["elementary-number-theory", "modular-arithmetic"],
        "title": r"Finding $3^{100}\bmod 7$ by hand",
        "body": r"""
            A calculator tells me that $3^{100}\equiv 4\pmod 7$, but in the exam we are not
            allowed to use one.

            What is the standard technique for reducing such a large power modulo a small prime
            like $7$?
            """,
        "formula": r"3^{100}\equiv 4\pmod 7",
        "dup_rels": [3, 3, 2, 3],
        "related": [("mod-3.0", 2), ("mod-4.0", 2), ("mod-2.0", 1)],
        "unrelated": ["prime-1.0", "gcd-1.0", "comb-1.0"],
        "formula_rels": [
            (r"3^{100}\equiv 4\pmod 7", 3),
            (r"3^6\equiv 1\pmod 7", 3),
            (r"3^{100}=\left(3^6\right)^{16}\cdot 3^4\equiv 3^4=81\equiv 4\pmod 7.", 3),
            (r"3^{100}\equiv 4\cdot 2\cdot 4=32\equiv 4\pmod 7.", 3),
            (r"3^{99}=(3^3)^{33}\equiv(-1)^{33}=-1", 2),
            (r"a^{p-1}\equiv 1\pmod p", [2, 2]),
            (r"7^4=2401\equiv 1\pmod{100}", 1),
        ],
    },
    {
        "dup": "comb-3",
        "tags": ["combinatorics", "binomial-coefficients"],
        "title": r"Counting non-negative integer solutions of $x_1+x_2+x_3+x_4=10$",
        "body": r"""
            How many solutions does this equation have with every $x_i$ a non-negative integer? I
            listed
            cases by hand for a while and lost track.

            I have heard the phrase <em>stars and bars</em>; how does it apply here, and what
            changes if every $x_i\geq 1$?
            """,
        "formula": r"x_1+x_2+x_3+x_4=10",
        "dup_rels": [3, 3, 2, 2],
        "related": [("comb-1.0", 1), ("comb-2.0", 1), ("comb-4.0", 1), ("comb-1.1", 1)],
        "unrelated": ["prob-3.0", "prob-1.0", "ind-1.0"],
        "formula_rels": [
            (r"x_1+x_2+x_3+x_4=10", 3),
            (r"\binom{10+4-1}{4-1}=\binom{13}{3}=286.", 3),
            (r"\binom{9}{3}=84", 2),
            (r"\binom{6+3}{3}=84", 2),
            (r"\binom{13}{3}-4\binom{7}{3}=286-140=146,", 2),
            (r"\binom{n}{k}", [1, 0]),
        ],
    },
    {
        "dup": "prob-1",
        "tags": ["probability", "dice"],
        "title": r"Chance of at least one 6 when a fair die is thrown four times",
        "body": r"""
            A fair die is thrown $4$ times. What is the probability that at least one six shows
            up? I tried to count the favourable outcomes among all $6^4=1296$ possibilities
            directly, but I got lost in the cases with two or more sixes.
            """,
        "formula": r"6^4=1296",
        "dup_rels": [3, 1],
        "related": [("prob-3.0", 1), ("prob-2.0", 1), ("prob-4.0", 1)],
        "unrelated": ["comb-4.0", "comb-3.0", "mod-1.0"],
        "formula_rels": [
            (r"6^4=1296", 3),
            (r"1-\left(\frac{5}{6}\right)^4=1-\frac{625}{1296}=\frac{671}{1296}\approx 0.518.", 3),
            (r"5^4=625", 2),
            (r"1-\left(\frac{35}{36}\right)^{24}\approx 0.491", 1),
            (r"P(N>k)=\left(\frac{5}{6}\right)^k", 1),
            (r"E=1+\frac{5}{6}E", 0),
            (r"4^{10}=1048576", 0),
        ],
    },
    {
        "dup": "cx-1",
        "tags": ["complex-numbers", "roots-of-unity"],
        "title": r"How do I find all solutions of $z^3=8i$?",
        "body": r"""
            I wrote $8i=8e^{i\pi/2}$, took the cube root and got $z=2e^{i\pi/6}=\sqrt{3}+i$. But
            a cubic equation should have three roots.

            Where are the other two, and how do I find them systematically?
            """,
        "formula": r"8i=8e^{i\pi/2}",
        "dup_rels": [3, 2, 2, 3],
        "related": [("cx-2.0", 2), ("cx-3.0", 1), ("cx-4.1", 1)],
        "unrelated": ["trig-2.0", "quad-4.2", "eig-1.0"],
        "formula_rels": [
            (r"8i=8e^{i\pi/2}", 3),
            (r"z=2e^{i(\frac{\pi}{6}+\frac{2k\pi}{3})},\qquad k=0,1,2,", 3),
            (r"(-2i)^3=-8i^3=8i", 2),
            (r"\sqrt[n]{r}\,e^{i(\theta+2k\pi)/n},\qquad k=0,\dots,n-1,", 3),
            (r"e^{i\theta}=\cos\theta+i\sin\theta", [2, 1]),
            (r"x=\pm 1,\pm 2i", 0),
            (r"i^i=e^{i\log i}=e^{-\pi/2}\approx 0.2079", 0),
        ],
    },
    {
        "dup": "ind-2",
        "tags": ["induction", "inequality"],
        "title": r"Inductive step for $2^n>n^2$ when $n\geq 5$",
        "body": r"""
            I am trying to prove $2^n>n^2$ for every integer $n\geq 5$ by induction. The base
            case $2^5=32>25$ is fine.

            For the step I assume $2^n>n^2$, so $2^{n+1}>2n^2$. It would suffice to have
            $2n^2\geq(n+1)^2$, but I do not see why that is true. Also, why does the statement
            start at $5$?
            """,
        "formula": r"2n^2\geq(n+1)^2",
        "dup_rels": [3, 3, 2],
        "related": [("ind-1.0", 1), ("ind-3.0", 1), ("ind-4.2", 2), ("ind-4.0", 1)],
        "unrelated": ["prime-2.0", "comb-1.2", "ser-2.0"],
        "formula_rels": [
            (r"2n^2\geq(n+1)^2", 3),
            (r"2^{n+1}=2\cdot 2^n>2n^2", 3),
            (r"n^2-2n-1\geq 0", 3),
            (r"(1+x)^{n+1}\geq(1+nx)(1+x)=1+(n+1)x+nx^2\geq 1+(n+1)x,", 1),
            (r"2^n>n^k", 1),
            (r"\frac{n^k}{2^n}\to 0", 1),
            (r"\sum_{k=1}^nk^2=\frac{n(n+1)(2n+1)}{6}", 0),
        ],
    },
]


# ---------------------------------------------------------------------------
# Generator
# ---------------------------------------------------------------------------

FIRST_POST_ID = 1001
FIRST_FORMULA_ID = 20001
FIRST_VISUAL_ID = 70001
FIRST_TOPIC_THREAD_ID = 5000001
BASE_DATE = datetime(2015, 1, 5, 8, 0, 0)
BLOCK_TAGS = ("<ol>", "<ul>", "<blockquote>", "<pre>")
FORMULA_RE = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$", re.S)
SPAN_RE = re.compile(r'<span class="math-container" id="([^"]+)">(\$\$?)(.*?)\2</span>', re.S)
TSV_HEADER = "id\tpost_id\tthread_id\ttype\tcomment_id\told_visual_id\tvisual_id\tissue\tformula"
TOPIC_TSV_HEADER = "id\ttopic_id\tthread_id\ttype\tformula"


@dataclass
class Formula:
    id: str
    post_id: int
    thread_id: int
    type: str
    latex: str
    visual_id: int = 0


@dataclass
class Post:
    id: int
    post_type: int
    parent_id: int
    key: str
    subject: str
    title: str
    body: str
    tags: list[str]
    created: datetime
    score: int
    owner: int
    view_count: int = 0
    answer_ids: list[int] = field(default_factory=list)
    accepted: int | None = None


def tsv_field(latex: str) -> str:
    return latex.replace("\t", " ").replace("\r", " ").replace("\n", " ")


def visual_key(latex: str) -> str:
    return re.sub(r"\s+", "", latex)


def to_html(text: str, sep: str = "\n\n", end: str = "\n") -> str:
    """Turn blank-line separated paragraphs into HTML; lines ending in \\\\ keep their newline."""
    parts = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = [line.strip() for line in block.strip().splitlines()]
        joined = lines[0]
        for prev, line in zip(lines[:-1], lines[1:], strict=True):
            joined += ("\n" if prev.endswith("\\\\") else " ") + line
        if not joined.startswith(BLOCK_TAGS):
            joined = f"<p>{joined}</p>"
        parts.append(joined)
    return sep.join(parts) + end


def render_math(text: str, next_id, sink: list[tuple[str, str]]) -> str:
    """Replace $...$ / $$...$$ by math-container spans; record (id, latex) in sink."""

    def repl(match: re.Match) -> str:
        display = match.group(1) is not None
        latex = match.group(1) if display else match.group(2)
        fid = next_id()
        sink.append((fid, latex))
        delim = "$$" if display else "$"
        return f'<span class="math-container" id="{fid}">{delim}{escape(latex)}{delim}</span>'

    return FORMULA_RE.sub(repl, text)


def attr(value: str) -> str:
    return '"' + escape(value, {'"': "&quot;", "\n": "&#xA;"}) + '"'


def text_node(value: str) -> str:
    return escape(value, {'"': "&quot;"})


def fmt_date(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]


def build_collection():
    posts: list[Post] = []
    formulas: list[Formula] = []
    by_key: dict[str, Post] = {}
    counter = iter(range(FIRST_FORMULA_ID, 10**9))

    def next_formula_id() -> str:
        return str(next(counter))

    post_id = FIRST_POST_ID
    qi = 0
    for subject, base_tags, questions in SUBJECTS:
        for qkey, title, extra_tags, body, answers in questions:
            created = BASE_DATE + timedelta(
                days=4 * qi,
                hours=(qi * 7) % 11,
                minutes=(qi * 13) % 60,
                seconds=(qi * 17) % 60,
                milliseconds=(qi * 137) % 1000,
            )
            score = 3 + (qi * 7) % 25
            sink: list[tuple[str, str]] = []
            title_html = render_math(title, next_formula_id, sink)
            formulas += [Formula(f, post_id, post_id, "title", x) for f, x in sink]
            sink = []
            body_html = render_math(to_html(body), next_formula_id, sink)
            formulas += [Formula(f, post_id, post_id, "question", x) for f, x in sink]
            question = Post(
                id=post_id,
                post_type=1,
                parent_id=0,
                key=qkey,
                subject=subject,
                title=title_html,
                body=body_html,
                tags=base_tags + extra_tags,
                created=created,
                score=score,
                owner=100 + (qi * 37) % 400,
                view_count=50 + (qi * 97) % 2000 + 20 * score,
            )
            posts.append(question)
            by_key[qkey] = question
            post_id += 1
            for j, answer in enumerate(answers):
                sink = []
                answer_html = render_math(to_html(answer), next_formula_id, sink)
                formulas += [Formula(f, post_id, question.id, "answer", x) for f, x in sink]
                post = Post(
                    id=post_id,
                    post_type=2,
                    parent_id=question.id,
                    key=f"{qkey}.{j}",
                    subject=subject,
                    title="",
                    body=answer_html,
                    tags=[],
                    created=created
                    + timedelta(
                        minutes=(j + 1) * (23 + (qi * (j + 1) * 31) % 300),
                        seconds=(qi * 11 + j * 7) % 60,
                        milliseconds=(qi * 31 + j * 97) % 1000,
                    ),
                    score=max(0, 2 + (qi * 5 + j * 3) % 14 - 3 * j),
                    owner=500 + (qi * 53 + j * 29) % 700,
                )
                posts.append(post)
                by_key[post.key] = post
                question.answer_ids.append(post_id)
                post_id += 1
            if qi % 5 != 3:
                pick = 1 if (qi % 7 == 2 and len(answers) > 1) else 0
                question.accepted = question.answer_ids[pick]
            qi += 1

    vids: dict[str, int] = {}
    for formula in formulas:
        key = visual_key(formula.latex)
        if key not in vids:
            vids[key] = FIRST_VISUAL_ID + len(vids)
        formula.visual_id = vids[key]
    return posts, formulas, by_key, vids


def posts_xml(posts: list[Post]) -> str:
    lines = ['<?xml version="1.0" encoding="utf-8"?>', "<posts>"]
    for post in posts:
        if post.post_type == 1:
            fields = [
                ("Id", str(post.id)),
                ("PostTypeId", "1"),
                ("CreationDate", fmt_date(post.created)),
                ("Score", str(post.score)),
                ("ViewCount", str(post.view_count)),
                ("Body", post.body),
                ("OwnerUserId", str(post.owner)),
                ("Title", post.title),
                ("Tags", "".join(f"<{tag}>" for tag in post.tags)),
                ("AnswerCount", str(len(post.answer_ids))),
                ("CommentCount", "0"),
            ]
            if post.accepted is not None:
                fields.append(("AcceptedAnswerId", str(post.accepted)))
        else:
            fields = [
                ("Id", str(post.id)),
                ("PostTypeId", "2"),
                ("ParentId", str(post.parent_id)),
                ("CreationDate", fmt_date(post.created)),
                ("Score", str(post.score)),
                ("Body", post.body),
                ("OwnerUserId", str(post.owner)),
                ("CommentCount", "0"),
            ]
        attrs = " ".join(f"{name}={attr(value)}" for name, value in fields)
        lines.append(f"  <row {attrs} />")
    lines.append("</posts>")
    return "\n".join(lines) + "\n"


def formulas_tsv(formulas: list[Formula]) -> str:
    rows = [TSV_HEADER]
    for f in formulas:
        cols = [
            f.id,
            f.post_id,
            f.thread_id,
            f.type,
            "",
            f.visual_id,
            f.visual_id,
            "",
            tsv_field(f.latex),
        ]
        rows.append("\t".join(str(c) for c in cols))
    return "\n".join(rows) + "\n"


def build_topics():
    counter = iter(range(1, 10**6))

    def next_qid() -> str:
        return f"q_{next(counter)}"

    rendered = []
    topic_formulas = []
    for k, topic in enumerate(TOPICS, start=1):
        thread_id = FIRST_TOPIC_THREAD_ID + k - 1
        sink: list[tuple[str, str]] = []
        title = render_math(topic["title"], next_qid, sink)
        topic_formulas += [(q, f"A.{k}", thread_id, "title", x) for q, x in sink]
        n_title = len(sink)
        question = render_math(to_html(topic["body"], sep=" ", end=" "), next_qid, sink)
        topic_formulas += [(q, f"A.{k}", thread_id, "body", x) for q, x in sink[n_title:]]
        matches = [(q, x) for q, x in sink if x == topic["formula"]]
        assert len(matches) == 1, (k, topic["formula"])
        rendered.append((k, title, question, topic["tags"], matches[0]))
    return rendered, topic_formulas


def topics_xml(rendered, task: int) -> str:
    lines = ['<?xml version="1.0" ?>', "<Topics>"]
    for k, title, question, tags, (qid, latex) in rendered:
        prefix = "A" if task == 1 else "B"
        lines.append(f'   <Topic number="{prefix}.{k}">')
        if task == 2:
            lines.append(f"      <Formula_Id>{qid}</Formula_Id>")
            lines.append(f"      <Latex>{text_node(latex)}</Latex>")
        lines.append(f"      <Title>{text_node(title)}</Title>")
        lines.append(f"      <Question>{text_node(question)}</Question>")
        lines.append(f"      <Tags>{','.join(tags)}</Tags>")
        lines.append("   </Topic>")
    lines.append("</Topics>")
    return "\n".join(lines) + "\n"


def build_qrels(by_key, formulas, vids):
    task1 = []
    task2 = []
    for k, topic in enumerate(TOPICS, start=1):
        dup = by_key[topic["dup"]]
        judged = {}
        assert len(topic["dup_rels"]) == len(dup.answer_ids), k
        for answer_id, rel in zip(dup.answer_ids, topic["dup_rels"], strict=True):
            judged[answer_id] = rel
        for key, rel in topic["related"]:
            post = by_key[key]
            assert post.post_type == 2 and post.subject == dup.subject, (k, key)
            judged[post.id] = rel
        for key in topic["unrelated"]:
            post = by_key[key]
            assert post.post_type == 2 and post.subject != dup.subject, (k, key)
            judged[post.id] = 0
        assert 8 <= len(judged) <= 15, (k, len(judged))
        task1 += [(f"A.{k}", pid, rel) for pid, rel in sorted(judged.items())]

        instances: dict[str, list[Formula]] = {}
        for f in formulas:
            instances.setdefault(visual_key(f.latex), []).append(f)
        fjudged = {}
        for latex, rels in topic["formula_rels"]:
            found = instances.get(visual_key(latex), [])
            assert found, (k, latex)
            if isinstance(rels, int):
                assert len(found) <= 4, (k, latex, len(found))
                rels = [rels] * len(found)
            assert len(found) >= len(rels), (k, latex)
            for f, rel in zip(found[: len(rels)], rels, strict=True):
                fjudged[f.id] = (f, rel)
        assert 6 <= len(fjudged) <= 12, (k, len(fjudged))
        query_vid = vids.get(visual_key(topic["formula"]))
        same = [f for f, _ in fjudged.values() if f.visual_id == query_vid]
        assert 1 <= len(same) <= 2, (k, "query formula must be judged 1-2 times")
        task2 += [
            (f"B.{k}", f, rel) for f, rel in sorted(fjudged.values(), key=lambda t: int(t[0].id))
        ]
    return task1, task2


def qrels_text(rows) -> str:
    return "".join(f"{topic}\t0\t{doc}\t{rel}\n" for topic, doc, rel in rows)


README = """\
# ARQMath-format sample (written for mathir; not taken from Math StackExchange or ARQMath)
All questions, answers, topics and judgments were written for mathir; only formats follow ARQMath.
- `Posts.V1.3.xml`: 80 questions, 250 answers (Posts.V1.3 format, formulas as math-container spans)
- `latex_representation_v3.tsv`: v3 formula index, one row per span, with visual ids
- `Topics_Task1_sample.xml`: Task 1 topics A.1-A.10 (new questions duplicating collection ones)
- `Topics_Task2_sample.xml`: Task 2 topics B.1-B.10 (one query formula `q_N` from each A.k)
- `topic_formulas_latex.tsv`: the topic formulas `q_N` (id, topic_id, thread_id, type, formula)
- `qrels_task1.tsv`: TREC qrels `A.k 0 answer_post_id rel` (rel 0-3, partial judgments)
- `qrels_task2_formula_id.tsv`, `qrels_task2_visual_id.tsv`: Task 2 qrels by formula / visual id
Regenerate with `python scripts/make_arqmath_sample.py` (deterministic, stdlib only, self-checking).
"""


def self_check(out: Path) -> dict:
    stats = {}
    root = ET.parse(out / "Posts.V1.3.xml").getroot()
    rows = root.findall("row")
    questions = {r.get("Id"): r for r in rows if r.get("PostTypeId") == "1"}
    answers = {r.get("Id"): r for r in rows if r.get("PostTypeId") == "2"}
    assert len(questions) == 80 and len(answers) == 250
    per_question = {qid: 0 for qid in questions}
    for row in answers.values():
        per_question[row.get("ParentId")] += 1
    assert all(1 <= n <= 5 for n in per_question.values())
    for qid, row in questions.items():
        assert int(row.get("AnswerCount")) == per_question[qid]
        acc = row.get("AcceptedAnswerId")
        assert acc is None or answers[acc].get("ParentId") == qid
    ids = [int(r.get("Id")) for r in rows]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    texts = [r.get("Body") for r in rows] + [r.get("Title") for r in questions.values()]
    assert len(set(texts)) == len(texts), "every title and body must be distinct"

    spans = {}
    for row in rows:
        for field_name, ftype in (("Title", "title"), ("Body", None)):
            value = row.get(field_name)
            if value is None:
                continue
            kind = ftype or ("question" if row.get("PostTypeId") == "1" else "answer")
            thread = row.get("Id") if row.get("PostTypeId") == "1" else row.get("ParentId")
            ET.fromstring(f"<div>{value}</div>")  # the HTML itself is well formed
            outside = SPAN_RE.sub("", value)
            assert "$" not in outside and "\\begin" not in outside, (row.get("Id"), outside)
            for fid, _delim, latex in SPAN_RE.findall(value):
                assert fid not in spans, fid
                spans[fid] = (row.get("Id"), thread, kind, tsv_field(html.unescape(latex)))

    lines = (out / "latex_representation_v3.tsv").read_text(encoding="utf-8").split("\n")
    assert lines[0] == TSV_HEADER and lines[-1] == ""
    tsv = {}
    vid_count: dict[str, int] = {}
    for line in lines[1:-1]:
        fid, post, thread, kind, comment, old_vid, vid, issue, latex = line.split("\t")
        assert comment == "" and issue == "" and old_vid == vid
        tsv[fid] = (post, thread, kind, latex)
        vid_count[vid] = vid_count.get(vid, 0) + 1
    assert set(tsv) == set(spans), "span ids and TSV ids differ"
    for fid, value in spans.items():
        assert tsv[fid] == value, (fid, tsv[fid], value)
    fid_to_vid = {line.split("\t")[0]: line.split("\t")[6] for line in lines[1:-1]}
    stats["formulas"] = len(tsv)
    stats["visual_ids"] = len(vid_count)
    stats["visual_ids_2plus"] = sum(1 for n in vid_count.values() if n >= 2)
    assert stats["visual_ids_2plus"] >= 30

    topic_ids = {}
    for task in (1, 2):
        troot = ET.parse(out / f"Topics_Task{task}_sample.xml").getroot()
        topics = troot.findall("Topic")
        assert [t.get("number") for t in topics] == [f"{'AB'[task - 1]}.{k}" for k in range(1, 11)]
        for topic in topics:
            text = topic.findtext("Title") + topic.findtext("Question")
            ET.fromstring(f"<div>{text}</div>")
            assert "$" not in SPAN_RE.sub("", text)
            found = SPAN_RE.findall(text)
            for qid, _delim, latex in found:
                topic_ids[qid] = html.unescape(latex)
            if task == 2:
                qid = topic.findtext("Formula_Id")
                assert topic_ids[qid] == topic.findtext("Latex")
    tlines = (out / "topic_formulas_latex.tsv").read_text(encoding="utf-8").split("\n")
    assert tlines[0] == TOPIC_TSV_HEADER
    assert {line.split("\t")[0] for line in tlines[1:-1]} == set(topic_ids)

    def read_qrels(name):
        text = (out / name).read_text(encoding="utf-8")
        return [line.split("\t") for line in text.splitlines()]

    q1 = read_qrels("qrels_task1.tsv")
    for _topic, zero, doc, rel in q1:
        assert zero == "0" and doc in answers and rel in "0123"
    for k in range(1, 11):
        rels = [int(r[3]) for r in q1 if r[0] == f"A.{k}"]
        assert 8 <= len(rels) <= 15 and sum(r >= 2 for r in rels) >= 1
    single = [k for k in range(1, 11) if sum(int(r[3]) >= 2 for r in q1 if r[0] == f"A.{k}") == 1]
    assert len(single) == 2, single
    q2f = read_qrels("qrels_task2_formula_id.tsv")
    q2v = read_qrels("qrels_task2_visual_id.tsv")
    expected: dict[tuple[str, str], int] = {}
    for topic, zero, fid, rel in q2f:
        assert zero == "0" and fid in tsv
        key = (topic, fid_to_vid[fid])
        expected[key] = max(expected.get(key, 0), int(rel))
    assert {(t, v): int(r) for t, _, v, r in q2v} == expected
    assert len(q2v) == len(expected)
    stats.update(qrels_task1=len(q1), qrels_task2_formula=len(q2f), qrels_task2_visual=len(q2v))
    stats["single_relevant_topics"] = [f"A.{k}" for k in single]
    assert (out / "Posts.V1.3.xml").stat().st_size < 300_000
    return stats


def main() -> None:
    out = OUT_DIR
    out.mkdir(parents=True, exist_ok=True)
    posts, formulas, by_key, vids = build_collection()
    rendered, topic_formulas = build_topics()
    task1, task2 = build_qrels(by_key, formulas, vids)

    visual = {}
    for topic, f, rel in task2:
        key = (topic, f.visual_id)
        visual[key] = max(visual.get(key, 0), rel)

    files = {
        "Posts.V1.3.xml": posts_xml(posts),
        "latex_representation_v3.tsv": formulas_tsv(formulas),
        "Topics_Task1_sample.xml": topics_xml(rendered, 1),
        "Topics_Task2_sample.xml": topics_xml(rendered, 2),
        "topic_formulas_latex.tsv": TOPIC_TSV_HEADER
        + "\n"
        + "".join(f"{q}\t{t}\t{th}\t{ty}\t{tsv_field(x)}\n" for q, t, th, ty, x in topic_formulas),
        "qrels_task1.tsv": qrels_text(task1),
        "qrels_task2_formula_id.tsv": qrels_text((t, f.id, r) for t, f, r in task2),
        "qrels_task2_visual_id.tsv": qrels_text(
            (t, v, r)
            for (t, v), r in sorted(visual.items(), key=lambda kv: (int(kv[0][0][2:]), kv[0][1]))
        ),
        "README.md": README,
    }
    for name, content in files.items():
        (out / name).write_text(content, encoding="utf-8", newline="\n")
    stats = self_check(out)
    for name in files:
        print(f"{name}\t{(out / name).stat().st_size} bytes")
    for key, value in stats.items():
        print(f"{key}: {value}")


if __name__ == "__main__":
    main()
