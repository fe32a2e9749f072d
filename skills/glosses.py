"""What common desktop commands do, in the words of people who do not know the label.

A control's label says what the program calls it ("Statusbar", "Go to...", "Reverse Polish"); a
request says what the user wants ("show the line and column I'm on", "take me to line 250"). Each
entry pairs a pattern for a label (the whole label, lower case, without its ellipsis) with short
descriptions of the command's effect or purpose, written once for the command wherever it appears,
not for one app. They are compared with a request as phrases of the skill (skills.skill_text.phrases:
embedding cosine, nearest phrase) and never as label words: "line" in a status bar's description must
not make "line numbers" name the status bar.
"""

from __future__ import annotations

import re

GLOSSES: list[tuple[str, tuple[str, ...]]] = [
    # -- windows, bars and panes ---------------------------------------------------------------
    (r"(always )?(show )?status ?bar", ("the line and column of the cursor shown at the bottom of the window",
                              "a strip along the bottom that says where the cursor is")),
    (r"(show )?tool ?bar", ("a row of icon buttons along the top for common actions",
                            "buttons for opening and saving files above the text")),
    (r"(show )?menu ?bar", ("the row of menus across the top of the window, file edit view",
                            "more room for the content without the menus at the top")),
    (r"side.?pane|side ?bar|document list", ("a list of the open documents in a panel at the side",
                                             "show open files down the side instead of tabs")),
    (r"full ?screen", ("fill the whole screen with the window", "hide the window borders and the desktop")),
    (r"(show )?line numbers?", ("numbers beside each line in the margin", "count the lines down the left side")),
    (r"(word |line |text )?wrap(ping)?( lines| text| words)?|word wrap", ("long lines continue on the next line instead of running "
                                                    "off the edge", "fit long lines inside the window")),
    (r"zoom in|increase font size|enlarge font", ("make the text look bigger on screen",)),
    (r"zoom out|decrease font size|shrink font", ("make the text look smaller on screen",)),
    (r"(zoom )?reset( zoom)?|normal size", ("put the text back to its normal size",)),
    # -- settings and information ----------------------------------------------------------------
    (r"preferences|settings|options|configure|configuration|properties",
     ("change how the program behaves", "customize the application's settings and defaults")),
    (r"about( \w+)*", ("which version of the program is installed", "who made this program and its credits")),
    (r"(help|contents|manual|user guide|documentation)( contents)?",
     ("read the program's documentation and instructions", "get help on how to use the program")),
    (r"(select |choose )?font|fonts?", ("make the letters bigger or smaller and pick a typeface",
                                        "change the text size and the typeface")),
    (r"(character )?encoding|character set|charset", ("fix accented letters that show up as junk",
                                                      "read or save the text in another character set")),
    (r"line endings?|end of line|eol", ("windows or unix line breaks, crlf or lf",)),
    (r"tab (size|width)|indentation width|indent width", ("how many spaces wide a tab is",)),
    (r"(syntax )?highlight(ing)?|filetype|language|syntax", ("color the code by programming language",
                                                          "code keywords shown in different colours")),
    (r"colou?r scheme|syntax colou?rs|(colou?r )?theme", ("the colours the text and code are drawn in",
                                                        "a dark or light colour theme")),
    (r"(dos|windows).*\(?cr ?lf\)?|cr ?lf", ("windows style line breaks at the end of each line",)),
    (r"unix.*\(?lf\)?|lf", ("unix and linux style line breaks at the end of each line",)),
    (r"mac.*\(?cr\)?|cr", ("old mac style line breaks at the end of each line",)),
    (r"write (unicode )?bom|(unicode )?byte order mark|bom", ("put a byte order mark at the start of the file",)),
    # -- files -----------------------------------------------------------------------------------
    (r"new( document| file| tab)?", ("start a blank empty document", "a fresh page to write on")),
    (r"new window", ("another window of the program",)),
    (r"open( file)?", ("load an existing file from the disk", "browse for a file to edit")),
    (r"open recent|recent( files| documents)?|recently (used|modified)",
     ("files worked on lately", "reopen a file from last time")),
    (r"save", ("keep my changes in the file", "write the document to the disk")),
    (r"save as", ("store a copy under a different file name", "save the document with another name or place")),
    (r"save all", ("save every open document at once",)),
    (r"(save|keep) with encoding|save with another encoding", ("save the file in another character set",)),
    (r"(save/restore |save |restore |manage )?sessions?( manager)?", (
        "remember the set of open files to bring them back later", "reopen all the files from last time")),
    (r"reload|revert", ("throw away my changes and load the file again from disk",)),
    (r"print( preview)?", ("send the document to the printer", "a paper copy of the document")),
    (r"close( tab| document| window)?", ("close this document",)),
    (r"next tab", ("switch to the next open document tab",)),
    (r"previous tab", ("switch back to the previous open document tab",)),
    (r"first tab", ("switch to the first open document tab",)),
    (r"last tab", ("switch to the last open document tab",)),
    (r"last active tab|(last |recently )?used tab", ("go back to the tab I used before this one",)),
    (r"detach tab|move tab to (a )?new window", ("move this tab out into a window of its own",)),
    (r"quit|exit", ("close the program and leave", "exit the application")),
    # -- editing ---------------------------------------------------------------------------------
    (r"undo", ("take back the last change", "reverse my last edit")),
    (r"redo", ("do again the change that was undone",)),
    (r"cut", ("remove the selection and put it on the clipboard",)),
    (r"copy", ("put a copy of the selection on the clipboard",)),
    (r"paste", ("insert what is on the clipboard",)),
    (r"select all", ("highlight the whole text", "mark everything in the document")),
    (r"delete( selection)?", ("remove the selected text",)),
    (r"(delete|remove) line", ("remove the whole line the cursor is on",)),
    (r"duplicate line( / selection)?|duplicate( line| selection)*", ("make a second copy of the current line",)),
    (r"(move )?line up", ("swap the current line with the one above",)),
    (r"(move )?line down", ("swap the current line with the one below",)),
    (r"(to )?upper ?case", ("make the letters capitals",)),
    (r"(to )?lower ?case", ("make the letters small, not capitals",)),
    (r"(to )?(title|start) ?case|capitali[sz]e", ("capitalize the first letter of each word",
                                                   "every word begins with a capital letter")),
    (r"(to )?opposite case|(toggle|swap|invert) case", ("swap capitals and small letters around",)),
    (r"sort( lines)?( alphabetically)?", ("put the lines in alphabetical order",)),
    (r"sort( lines)? (reversely|in reverse|descending)|reverse sort", ("the lines in descending order, last to "
                                                                      "first",)),
    (r"transpose", ("swap two neighbouring characters or lines around",)),
    (r"auto.?indent(ation)?", ("a new line starts indented as far as the line above when pressing enter",
                              "keep the indentation of the previous line")),
    (r"(strip|remove|trim|delete) trailing (spaces|whitespace|blanks)", (
        "remove the extra spaces at the end of the lines", "clean up invisible whitespace after the last "
        "character of each line")),
    (r"insert spaces|(use )?spaces instead of tabs|soft tabs", ("pressing tab types spaces, not a tab character",)),
    (r"paste from history|clipboard history", ("paste something copied earlier, from the clipboard's history",)),
    (r"(increase )?indent", ("shift the lines to the right",)),
    (r"(decrease )?(unindent|outdent)|decrease indent", ("shift the lines back to the left",)),
    (r"(toggle )?comment( lines?)?", ("turn the lines into comments",)),
    (r"(check )?spell(ing)?( check)?|spell check", ("look for typos and misspelled words",
                                                    "proofread the text for spelling mistakes")),
    (r"(insert |paste )?date( and time)?|(insert |paste )?date and time|time ?stamp",
     ("put today's date and the current time into the text",)),
    (r"(text )?tabs to spaces|convert tabs", ("replace the tab characters with plain spaces",)),
    (r"(leading )?spaces to tabs", ("replace runs of spaces with tab characters",)),
    (r"read ?only|viewer mode|view only|lock", ("stop the text from being changed by accident",
                                                "read the document without being able to type into it")),
    (r"insert (unicode )?(character|special character)|character map", ("type a special symbol",)),
    # -- search ----------------------------------------------------------------------------------
    (r"find|search|find text|search for", ("look for a word in the text", "locate where some text appears")),
    (r"(find and )?replace|search and replace|find & replace", (
        "swap one word for another everywhere in the text", "change every occurrence of some text into something else",
        "fix a misspelling everywhere at once")),
    (r"find next|search next", ("go to the next match",)),
    (r"match case|case sensitive", ("find only matches with the same capital and small letters",)),
    (r"(match )?whole words?( only)?", ("match only complete words, not parts of longer words",)),
    (r"regular expressions?|regex", ("search with a pattern, a regular expression",)),
    (r"highlight all|highlight (all )?matches", ("mark every match of the search in the text",)),
    (r"incremental search|search as you type", ("find the text while I am still typing it",)),
    (r"find previous|search previous", ("go back to the previous match",)),
    (r"go ?to( line)?|jump to( line)?|go to line|jump", ("move the cursor to a line by its number",
                                                         "take me to a particular line")),
    # -- calculators -----------------------------------------------------------------------------
    (r"scientific( mode)?", ("a keypad with trigonometry, logarithms and powers: sin cos tan log",
                             "the advanced calculator with more functions")),
    (r"basic( mode)?|simple( mode)?", ("a plain calculator with only the basic arithmetic keys",)),
    (r"paper( mode)?|tape|history", ("a running list of the calculations like an adding machine's paper tape",)),
    (r"(reverse polish|rpn)( notation| \(rpn\))?", ("enter the numbers first and the operation after, with an "
                                                     "enter key, like an hp calculator",)),
    (r"formula( entry)?|algebraic|expression", ("type a whole expression and have it worked out at once",)),
    (r"hexadecimal|hex", ("count in base 16 with the digits a to f",)),
    (r"binary|bin", ("count in base 2 with ones and zeros",)),
    (r"octal|oct", ("count in base 8",)),
    (r"decimal|dec", ("count in the usual base 10",)),
    (r"degrees?|deg", ("measure angles in degrees",)),
    (r"radians?|rad", ("measure angles in radians",)),
    (r"grad(ians|s)?", ("measure angles in gradians",)),
    (r"cut display( value)?", ("move the displayed number to the clipboard and clear the display",)),
    (r"copy display( value)?|copy result", ("put the displayed number on the clipboard",)),
    (r"paste display( value)?", ("put the number from the clipboard on the display",)),
    (r"display control", ("the clear and backspace keys", "the keys that clear the display or delete a digit")),
    (r"logical", ("the and, or, xor and not keys for bitwise logic",)),
    (r"memory|ms|mr|mc|m\+|m-", ("store a number to recall it later", "store a number in memory or recall it")),
    (r"functions?", ("the keys for functions such as square root and powers",)),
    (r"standard|arithmetic", ("the keys for adding, subtracting, multiplying and dividing",)),
    (r"constants?", ("physical and mathematical constants such as pi",)),
    (r"(show )?thousands? separators?|digit grouping", ("group the digits in threes with commas, 1,000,000",)),
    (r"remember display value( on exit)?", ("keep the number on the display after closing and reopening",)),
    # -- calculator keys: their symbols (a word label such as Add or Clear means other things elsewhere) ----
    (r"\.|,|decimal point", ("the decimal point key", "a dot before the fractional digits")),
    (r"\+/-|±|chs|change sign", ("change the sign of the number", "make the number negative")),
    (r"=|equals", ("work out the answer", "show the result of the sum")),
    (r"<-|←|bksp|backspace", ("delete the last digit typed", "backspace one digit")),
    (r"ac|all clear", ("clear everything and start again from zero",)),
    (r"c|ce|clear entry", ("clear the display", "wipe out the current number")),
    (r"%", ("work out a percentage",)),
    (r"sqrt|√|√x", ("take the square root of the number",)),
    (r"x\^2|x²|sqr", ("square the number, times itself",)),
    (r"x\^y|y\^x|x\^n", ("raise a number to a power",)),
    (r"1/x", ("one divided by the number",)),
    (r"n!|x!", ("the factorial of the number",)),
    (r"mod", ("the remainder after dividing",)),
    (r"\+|plus", ("add two numbers together",)),
    (r"-|−|minus", ("subtract one number from another",)),
    (r"\*|×|times", ("multiply two numbers",)),
    (r"/|÷", ("divide one number by another",)),
    (r"ln", ("the natural logarithm, base e",)),
    (r"inv", ("the inverse functions, such as arcsine",)),
    (r"hyp", ("the hyperbolic functions, sinh cosh tanh",)),
    (r"abs", ("the absolute value, the number without its minus sign",)),
    (r"e|e: .*euler.*", ("euler's number e, 2.718",)),
    (r"log", ("the logarithm in base 10",)),
    (r"pi|π", ("the number pi, 3.14159",)),
    (r"ee", ("enter an exponent of ten, scientific notation",)),
    (r"\(|\)", ("a bracket to group part of a calculation",)),
]

_COMPILED = [(re.compile(rf"(?:{p})", re.IGNORECASE), phrases) for p, phrases in GLOSSES]


def glosses(label: str) -> list[str]:
    """What the command a control's label names does, in plain words (empty for an unknown label)."""
    low = " ".join(label.lower().replace("_", "").split())
    low = low.rstrip(".…") or low  # "Preferences..." is Preferences; a keypad's "." stays itself
    return [g for rx, phrases in _COMPILED if rx.fullmatch(low) for g in phrases]
